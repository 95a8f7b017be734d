// Package doccheck checks the relative links of the project's Markdown
// documentation (README.md and the pages under docs/) and the file maps
// of the package docs.
//
// A link [text](path), [text](path#anchor) or [text](#anchor) must name a
// file or directory that exists, and an anchor must be one that a heading
// of the target Markdown file produces under GitHub's rule (see Slug).
// Links to other sites (http, https, mailto and any other scheme) are not
// followed, and links inside fenced code blocks or code spans are not
// links. The package's test runs Check over the repository, so that a page
// that moves or a heading that is renamed breaks `go test` rather than a
// reader's click.
//
// A package doc has a file map when an indented line of it starts with a
// Go file's name (the "Where things are" block of acp, mcpclient and
// mcpclient/oauth). The test checks every package of the module that has
// one: the map names each non-test file of the package, and every Go
// file a line of the map names is one of them.
package doccheck
