package session_test

import (
	"errors"
	"fmt"
	"os"

	"github.com/acpgate/acpgate/session"
)

// A session's life in the store: created, records appended, metadata
// changed, closed; then resumed with its records, as session/load does
// after a restart.
func ExampleStore() {
	dir, err := os.MkdirTemp("", "acpgate-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	store, err := session.Open(dir)
	if err != nil {
		fmt.Println(err)
		return
	}

	ss, err := store.Create("s1", "/home/user/project")
	if err != nil {
		fmt.Println(err)
		return
	}
	// Records are the caller's: a kind and any JSON-encodable value.
	_ = ss.Append("user", map[string]string{"text": "hello"})
	_ = ss.Append("agent", map[string]string{"text": "hi"})
	_ = ss.UpdateMeta(func(m *session.Meta) { m.Title = "Greetings" })
	// Close syncs the log and the metadata.
	if err := ss.Close(); err != nil {
		fmt.Println(err)
		return
	}

	ss, records, err := store.Resume("s1")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer ss.Close()
	meta := ss.Meta()
	fmt.Println("session:", meta.ID, meta.Cwd, meta.Title)
	for _, r := range records {
		fmt.Println(r.Kind, string(r.Data))
	}
	_, err = store.Create("s1", "/elsewhere")
	fmt.Println("created twice:", errors.Is(err, session.ErrExists))
	// Output:
	// session: s1 /home/user/project Greetings
	// user {"text":"hello"}
	// agent {"text":"hi"}
	// created twice: true
}
