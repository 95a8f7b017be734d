// Package skills is acpgate's skills: folders with a SKILL.md (YAML
// frontmatter with a name and a description, then instructions) and
// supporting files, in the Agent Skills format (agentskills.io), from the
// project (.agents/skills, .claude/skills), from the user's folders, and
// from MCP servers that declare the skills extension
// (io.modelcontextprotocol/skills, SEP-2640; mcpclient lists them). A
// skill is listed by name and description and loaded only when asked:
// Load reads its SKILL.md then, a file skill's by the rules acpgate reads
// a project's files by (internal/base/safefile), a server skill's through
// the server, verified against its listing's digest, size and
// frontmatter before any of it is used.
//
// Where things are:
//
//	doc.go      this map
//	format.go   the SKILL.md format: frontmatter split, parsed and checked
//	files.go    skills from files: the folders looked in, Discover, a skill's files
//	skill.go    Skill, Source, Loaded, Load
//	server.go   skills from MCP servers: FromEntry, Verify, VerifyError, ReadFile
//	catalog.go  Catalog: a session's skills under their IDs, in order, searchable
package skills
