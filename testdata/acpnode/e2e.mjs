// e2e.mjs - drive acpgate with the official TypeScript ACP SDK.
//
// Usage: node e2e.mjs <path-to-acpgate> <path-to-testdata/everything>
//
// Starts the MCP reference server (@modelcontextprotocol/server-everything,
// pinned in testdata/everything) in streamableHttp and sse modes on
// 127.0.0.1, runs acpgate as an ACP agent over stdio, and connects to it with
// @agentclientprotocol/sdk (pinned in package-lock.json here). One session
// gets three MCP servers (stdio, streamable HTTP, SSE); for each, the prompt
// `/call mcp__<server>__get-sum {"a":2,"b":40}` must produce a completed
// tool_call_update with the text "The sum of 2 and 40 is 42." and stop with
// end_turn. Permission requests are answered with the allow_once option
// (though the pinned server marks get-sum readOnlyHint: true, so acpgate
// runs it without asking; the log line counts the requests).
// Then, on the stdio server, `/call mcp__ev-stdio__trigger-elicitation-request
// {}`: the client declares form elicitation, so the server's question
// reaches it as elicitation/create (which the SDK validates: it must name
// the session and the tool call); the client answers {name: "Ann"} and the
// completed call must report "Name: Ann" and the form's default
// "Favorite Integer: 42".
// Finally acpgate's stdin is closed and it must exit with status 0.
//
// Prints "acpnode e2e: N passed, M failed" and exits 0 only if all passed.
// Run by cmd/acpgate/node_test.go (TestNodeSDKClient); `make npm` installs
// the packages.
//
// SDK note: @agentclientprotocol/sdk 2.x removed ClientSideConnection and the
// Client interface; a client is now `acp.client().onRequest(...)
// .onNotification(...)` and talks to the agent through the ClientContext
// given to connectWith (ctx.request(acp.methods.agent..., params)).

import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import readline from "node:readline";
import { Readable, Writable } from "node:stream";

import * as acp from "@agentclientprotocol/sdk";

const OVERALL_MS = 60_000;
const LISTEN_MS = 20_000; // reference server start-up
const REQUEST_MS = 20_000; // any one ACP request (initialize, session/new, a prompt)
const EXIT_MS = 20_000; // acpgate exit after stdin EOF
const ENTRY = "node_modules/@modelcontextprotocol/server-everything/dist/index.js";
const WANT_TEXT = "The sum of 2 and 40 is 42.";

const children = new Set(); // running child processes, killed on failure
const tempDirs = [];
const results = []; // {name, ok, why}
let agentErr = null; // tail of acpgate's stderr, once started
let agentClosed = null; // resolves to acpgate's exit status once its stdio closed

function log(...a) {
  console.log("[e2e]", ...a);
}

// tail keeps the last max characters written to it (for diagnostics).
function tail(max = 64 * 1024) {
  let s = "";
  return {
    add(chunk) {
      s += chunk;
      if (s.length > max) s = s.slice(s.length - max);
    },
    get text() {
      return s;
    },
  };
}

function track(child) {
  children.add(child);
  child.once("exit", () => children.delete(child));
  return child;
}

function killAll() {
  for (const c of children) {
    try {
      c.kill("SIGKILL");
    } catch {
      // already gone
    }
  }
}

function cleanupTemp() {
  for (const d of tempDirs) rmSync(d, { recursive: true, force: true });
}

process.on("exit", killAll);
for (const sig of ["SIGINT", "SIGTERM"]) {
  process.once(sig, () => {
    results.push({ name: "e2e", ok: false, why: `interrupted by ${sig}` });
    killAll();
    summary();
    cleanupTemp();
    process.exit(1);
  });
}

function withTimeout(promise, ms, what) {
  let timer;
  const t = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms: ${what}`)), ms);
  });
  return Promise.race([promise, t]).finally(() => clearTimeout(timer));
}

function errText(e) {
  if (e instanceof acp.RequestError || (e && typeof e === "object" && "code" in e)) {
    return `${e.message} (code ${e.code}${e.data !== undefined ? `, data ${JSON.stringify(e.data)}` : ""})`;
  }
  return e instanceof Error ? e.message : String(e);
}

// startReference runs the reference server in mode ("streamableHttp" or
// "sse") and resolves to its base URL once it prints LISTENING.
async function startReference(everythingDir, mode) {
  const child = track(
    spawn(process.execPath, ["--require", "./loopback.cjs", ENTRY, mode], {
      cwd: everythingDir,
      env: { ...process.env, PORT: "0" },
      stdio: ["ignore", "pipe", "pipe"],
    }),
  );
  const out = tail(16 * 1024);
  child.stdout.on("data", (d) => out.add(d.toString()));
  const lines = readline.createInterface({ input: child.stderr, crlfDelay: Infinity });
  const listening = new Promise((resolve, reject) => {
    lines.on("line", (line) => {
      out.add(line + "\n");
      const m = /^LISTENING (127\.0\.0\.1:\d+)$/.exec(line);
      if (m) resolve(`http://${m[1]}`);
    });
    child.once("error", reject);
    child.once("exit", (code, sig) =>
      reject(new Error(`reference server (${mode}) exited (${code ?? sig}) before listening:\n${out.text}`)),
    );
  });
  const base = await withTimeout(listening, LISTEN_MS, `reference server (${mode}) LISTENING line`);
  return { child, base, output: out };
}

function toolName(server, tool) {
  return `mcp__${server}__${tool}`.replace(/[^A-Za-z0-9_-]/g, "_");
}

// completedWithText reports whether u is a completed tool_call_update whose text
// content is exactly want.
function completedWithText(u, want) {
  if (u.sessionUpdate !== "tool_call_update" || u.status !== "completed") return false;
  return (u.content ?? []).some((c) => c.type === "content" && c.content?.type === "text" && c.content.text === want);
}

async function main() {
  const [agentArg, everythingArg] = process.argv.slice(2);
  if (!agentArg || !everythingArg) {
    console.error("usage: node e2e.mjs <path-to-acpgate> <path-to-testdata/everything>");
    process.exit(2);
  }
  const agentBin = path.resolve(agentArg);
  const everythingDir = path.resolve(everythingArg);
  const entry = path.join(everythingDir, ENTRY);
  if (!existsSync(entry)) throw new Error(`${entry} is missing: run \`make npm\``);

  const stateDir = mkdtempSync(path.join(tmpdir(), "acpnode-state-"));
  const cwd = mkdtempSync(path.join(tmpdir(), "acpnode-cwd-"));
  tempDirs.push(stateDir, cwd);

  const [http, sse] = await Promise.all([
    startReference(everythingDir, "streamableHttp"),
    startReference(everythingDir, "sse"),
  ]);
  log(`reference servers: streamableHttp ${http.base}, sse ${sse.base}`);

  // A generous startup budget: the stdio reference server starts through
  // node, which takes seconds on a loaded machine.
  const agent = track(
    spawn(agentBin, ["--state-dir", stateDir, "--log-level", "debug", "--startup-budget", "30s"], {
      stdio: ["pipe", "pipe", "pipe"],
    }),
  );
  agentErr = tail();
  agent.stderr.on("data", (d) => agentErr.add(d.toString()));
  agent.stdin.on("error", () => {}); // EPIPE if acpgate dies; reported via exit
  const agentExit = new Promise((resolve) => agent.once("exit", (code, signal) => resolve({ code, signal })));
  agentClosed = new Promise((resolve) => agent.once("close", (code, signal) => resolve({ code, signal })));

  // The client: records every session/update and approves permission
  // requests with their allow_once option.
  const updates = []; // SessionNotification, in arrival order
  const permissions = []; // RequestPermissionRequest
  const elicitations = []; // CreateElicitationRequest, as validated by the SDK
  const app = acp
    .client({ name: "acpnode-e2e" })
    .onNotification(acp.methods.client.session.update, ({ params }) => {
      updates.push(params);
    })
    .onRequest(acp.methods.client.session.requestPermission, ({ params }) => {
      permissions.push(params);
      const opt = params.options.find((o) => o.kind === "allow_once");
      if (!opt) {
        log(`permission request without an allow_once option: ${JSON.stringify(params.options)}`);
        return { outcome: { outcome: "cancelled" } };
      }
      return { outcome: { outcome: "selected", optionId: opt.optionId } };
    })
    .onRequest(acp.methods.client.elicitation.create, ({ params }) => {
      elicitations.push(params);
      return { action: "accept", content: { name: "Ann" } };
    });

  const stream = acp.ndJsonStream(Writable.toWeb(agent.stdin), Readable.toWeb(agent.stdout));

  const servers = [
    { name: "ev-stdio", command: process.execPath, args: [entry, "stdio"], env: [] },
    { type: "http", name: "ev-http", url: `${http.base}/mcp`, headers: [] },
    { type: "sse", name: "ev-sse", url: `${sse.base}/sse`, headers: [] },
  ];

  await app.connectWith(stream, async (ctx) => {
    const init = await withTimeout(
      ctx.request(acp.methods.agent.initialize, {
        protocolVersion: 1,
        clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false, elicitation: { form: {} } },
        clientInfo: { name: "acpnode-e2e", version: "0.0.0" },
      }),
      REQUEST_MS,
      "initialize",
    );
    log(`initialize: protocolVersion ${init.protocolVersion}, agent ${JSON.stringify(init.agentInfo ?? null)}`);
    if (init.protocolVersion !== 1) throw new Error(`initialize: protocolVersion ${init.protocolVersion}, want 1`);

    const sess = await withTimeout(
      ctx.request(acp.methods.agent.session.new, { cwd, mcpServers: servers }),
      REQUEST_MS,
      "session/new",
    );
    const sessionId = sess.sessionId;
    log(`session/new: ${sessionId}`);

    const prompt = (text) =>
      withTimeout(
        ctx.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text }] }),
        REQUEST_MS,
        `session/prompt ${JSON.stringify(text)}`,
      );

    for (const s of servers) {
      const tool = toolName(s.name, "get-sum");
      const text = `/call ${tool} {"a":2,"b":40}`;
      const from = updates.length;
      const asked = permissions.length;
      let why = null;
      try {
        const resp = await prompt(text);
        const mine = updates
          .slice(from)
          .filter((n) => n.sessionId === sessionId)
          .map((n) => n.update);
        const calls = mine.filter((u) => u.sessionUpdate === "tool_call" || u.sessionUpdate === "tool_call_update");
        if (!mine.some((u) => completedWithText(u, WANT_TEXT))) {
          why = `no completed tool_call_update with text ${JSON.stringify(WANT_TEXT)}; tool call updates: ${JSON.stringify(calls)}; other updates: ${JSON.stringify(mine.filter((u) => !calls.includes(u)))}`;
        } else if (resp.stopReason !== "end_turn") {
          why = `stopReason ${JSON.stringify(resp.stopReason)}, want "end_turn"`;
        }
        log(`${s.name}: ${calls.length} tool call updates, ${permissions.length - asked} permission request(s), stopReason ${resp.stopReason}`);
      } catch (e) {
        why = `prompt failed: ${errText(e)}`;
      }
      results.push({ name: s.name, ok: why === null, why });
      log(`${why === null ? "PASS" : "FAIL"} ${s.name}${why ? " (details below)" : ""}`);
    }

    {
      const from = updates.length;
      let why = null;
      try {
        const resp = await prompt(`/call ${toolName("ev-stdio", "trigger-elicitation-request")} {}`);
        const mine = updates
          .slice(from)
          .filter((n) => n.sessionId === sessionId)
          .map((n) => n.update);
        const texts = mine
          .filter((u) => u.sessionUpdate === "tool_call_update" && u.status === "completed")
          .flatMap((u) => (u.content ?? []).filter((c) => c.content?.type === "text").map((c) => c.content.text))
          .join("\n");
        const e = elicitations[0];
        if (elicitations.length !== 1 || e.sessionId !== sessionId || !e.toolCallId || e.mode !== "form") {
          why = `elicitation/create as received: ${JSON.stringify(elicitations)}`;
        } else if (!texts.includes("Name: Ann") || !texts.includes("Favorite Integer: 42")) {
          why = `the call's result lacks the answer and the defaults: ${JSON.stringify(texts)}`;
        } else if (resp.stopReason !== "end_turn") {
          why = `stopReason ${JSON.stringify(resp.stopReason)}, want "end_turn"`;
        }
      } catch (e) {
        why = `prompt failed: ${errText(e)}`;
      }
      results.push({ name: "elicitation", ok: why === null, why });
      log(`${why === null ? "PASS" : "FAIL"} elicitation`);
    }

    if (results.some((r) => !r.ok)) {
      // For diagnosis: what acpgate thinks of its MCP servers.
      try {
        const from = updates.length;
        await prompt("/mcp");
        const txt = updates
          .slice(from)
          .map((n) => n.update)
          .filter((u) => u.sessionUpdate === "agent_message_chunk" && u.content?.type === "text")
          .map((u) => u.content.text)
          .join("");
        log(`/mcp says:\n${txt}`);
      } catch (e) {
        log(`/mcp failed: ${errText(e)}`);
      }
    }
  });

  // connectWith closed the connection; make sure acpgate sees stdin EOF.
  if (!agent.stdin.destroyed && !agent.stdin.writableEnded) agent.stdin.end();
  const ex = await withTimeout(agentExit, EXIT_MS, "acpgate exit after stdin EOF").catch((e) => ({ err: e }));
  if (ex.err) {
    results.push({ name: "acpgate exit", ok: false, why: errText(ex.err) });
  } else if (ex.code !== 0) {
    results.push({ name: "acpgate exit", ok: false, why: `exit ${ex.code ?? ex.signal}, want 0` });
  }

  for (const ref of [http, sse]) ref.child.kill("SIGTERM");
  return summary();
}

// summary prints the failures (with acpgate's stderr) and the result line,
// and returns the exit status.
function summary(want = 4 /* one per MCP server, and the elicitation */) {
  const passed = results.filter((r) => r.ok).length;
  const failed = results.length - passed;
  for (const r of results.filter((r) => !r.ok)) console.log(`FAIL ${r.name}: ${r.why}`);
  if (failed > 0 && agentErr) {
    console.log(`--- acpgate stderr (tail) ---\n${agentErr.text}--- end acpgate stderr ---`);
  }
  console.log(`acpnode e2e: ${passed} passed, ${failed} failed`);
  return failed === 0 && passed === want ? 0 : 1;
}

const overall = setTimeout(() => {
  results.push({ name: "e2e", ok: false, why: `overall timeout (${OVERALL_MS} ms)` });
  summary();
  killAll();
  cleanupTemp();
  process.exit(1);
}, OVERALL_MS);
overall.unref();

let code = 1;
try {
  code = await main();
} catch (e) {
  results.push({ name: "e2e", ok: false, why: e && e.stack ? `${errText(e)}\n${e.stack}` : errText(e) });
  killAll();
  if (agentClosed) {
    // Let acpgate's stderr drain so the summary shows all of it.
    const st = await withTimeout(agentClosed, 2000, "acpgate stdio close").catch(() => null);
    if (st) results.push({ name: "acpgate", ok: false, why: `exited with ${st.code ?? st.signal} (killed by this script if SIGKILL)` });
  }
  code = summary();
}
if (code !== 0) killAll();
cleanupTemp();
clearTimeout(overall);
process.exit(code);
