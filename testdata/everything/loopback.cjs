// loopback.cjs - preload for @modelcontextprotocol/server-everything in tests.
//
// Use: node --require ./loopback.cjs node_modules/@modelcontextprotocol/server-everything/dist/index.js streamableHttp
//
// The server calls express's app.listen(PORT), which binds every interface and
// has no HOST setting. This script patches net.Server.prototype.listen (which
// http.Server inherits) so that every TCP listen in the process binds 127.0.0.1
// only, whatever host was asked for. Unix sockets, named pipes and inherited
// handles/fds are left alone.
//
// Once a TCP server is listening it writes one line to stderr:
//
//     LISTENING 127.0.0.1:<port>
//
// so tests can start the server with PORT=0 and read the real port (the
// server's own ready line just echoes the PORT env value, e.g. "port 0").
// If listen fails it writes "LISTEN-ERROR <code> <message>" to stderr and
// exits with status 1. The server's own "listening" message cannot be trusted
// here, because express 5 calls the listen callback on errors too.
"use strict";

const net = require("node:net");

const LOOPBACK = "127.0.0.1";
const origListen = net.Server.prototype.listen;

function isPortLike(v) {
  if (v === undefined || v === null) return true; // listen() -> random port
  if (typeof v === "number") return true;
  return typeof v === "string" && /^\s*\d+\s*$/.test(v);
}

net.Server.prototype.listen = function listen(...args) {
  let cb;
  if (typeof args[args.length - 1] === "function") cb = args.pop();

  let opts = null; // null => not TCP, pass through unchanged
  const first = args[0];
  if (first !== null && typeof first === "object") {
    // listen(options) or listen(handle)
    const isHandle = "_handle" in first || "fd" in first || "handle" in first;
    if (!isHandle && first.path === undefined) {
      opts = { ...first, host: LOOPBACK };
      delete opts.ipv6Only;
    }
  } else if (isPortLike(first)) {
    // listen(port[, host][, backlog])
    opts = { port: first == null ? 0 : Number(first), host: LOOPBACK };
    const backlog = typeof args[1] === "number" ? args[1] : args[2];
    if (typeof backlog === "number") opts.backlog = backlog;
  }

  if (opts === null) {
    if (cb) args.push(cb);
    return origListen.apply(this, args);
  }

  const onListening = () => {
    this.removeListener("error", onError);
    const a = this.address();
    if (a && typeof a === "object") {
      process.stderr.write(`LISTENING ${a.address}:${a.port}\n`);
    }
  };
  const onError = (err) => {
    this.removeListener("listening", onListening);
    process.stderr.write(`LISTEN-ERROR ${err && err.code} ${err && err.message}\n`);
    process.exit(1);
  };
  // Registered before origListen so they run before the caller's callback.
  this.once("listening", onListening);
  this.once("error", onError);
  return cb ? origListen.call(this, opts, cb) : origListen.call(this, opts);
};
