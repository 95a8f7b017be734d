// Package secrets resolves secret references in configuration values and
// redacts every resolved secret wherever it could surface.
//
// # References
//
// A configuration value (an MCP server's environment variable or HTTP
// header, the model API key) that is exactly a secret reference is replaced
// whole by the secret:
//
//	secret://env/NAME           the agent's environment variable NAME
//	secret://file/PATH          the contents of a file; PATH must be absolute,
//	                            so it starts with a second slash
//	                            (secret://file//run/secrets/token), or with
//	                            ~/ for the home directory (secret://file/~/.token)
//	secret://gcp/NAME[#VERSION] gcloud secrets versions access VERSION --secret=NAME
//	                            (VERSION defaults to latest)
//	secret://aws/NAME           aws secretsmanager get-secret-value --secret-id NAME
//	                            --query SecretString --output text
//	secret://vault/PATH[#FIELD] vault kv get -field=FIELD PATH (FIELD defaults to value)
//
// One trailing newline ("\n" or "\r\n") is trimmed from a file's contents and
// from a command's output. References are not expanded further: ${VAR}
// inside a reference, or a secret:// reference produced by expansion, is
// taken literally.
//
// Any other value may contain ${VAR} (VAR a letter or underscore followed by
// letters, digits and underscores), expanded from the agent's environment
// anywhere in the value, as in "Bearer ${TOKEN}". "$$" is not special and
// "$VAR" without braces is literal. An undefined VAR is an error naming it;
// a malformed ${...} is an error wrapping [ErrBadReference].
//
// # Redaction
//
// Every value resolved from a secret:// reference is registered with a
// [Redactor]. A value that ${VAR} expansion takes from the environment is
// registered only when the configuration key or the variable's name looks
// like a credential ([LooksLikeCredential]): expanding ${HOME} into a path
// must not redact the path from every log line. The Redactor then replaces
// each registered value by [Redacted] in text, in raw JSON (in its strings
// only, member names included, however their characters are escaped: see
// [Redactor.RedactJSON]), in log records ([Redactor.Handler]) and in anything
// written through [Redactor.Writer].
//
// Errors returned by this package name the reference that failed
// (secret://aws/prod/db, ${TOKEN}) and never contain a secret value, not
// even partial output of a failed command.
package secrets
