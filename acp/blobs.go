package acp

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/acpgate/acpgate/gateway"
)

// This file keeps the images and audio of the model's history in the
// session log once each, so that session/load and resume give the model
// the same parts while every line of the log stays bounded and the log
// stays append-only. A part whose base64 data is longer than
// minBlobBytes is written as a blob record (recBlob: its SHA-256 and its
// data) before the first history record that uses it, and that record
// holds, in the part's data, blobRef and the hash instead (valid base64
// holds no ':', so the two are never confused). The same image in the
// user's view of a result (Content) and in the model's (ModelContent), or
// returned again, is one blob. A part over maxBlobBytes is not kept: the
// record holds a note in its place, and a load gives the model that note.
// A fork copies the log, and with it the blobs.

// recBlob is the record kind of a blob (storedBlob).
const recBlob = "blob"

// blobRef opens the data of a part kept as a blob: the hash follows.
const blobRef = "blob:sha256:"

// minBlobBytes is the base64 size from which a part is kept as a blob;
// maxBlobBytes the largest kept (5 MiB of base64, Anthropic's bound on an
// image, over OpenAI's default of none sent larger by a session with
// limits below it).
const (
	minBlobBytes = 4 << 10
	maxBlobBytes = 5 << 20
)

// storedBlob is a blob record's data.
type storedBlob struct {
	SHA256 string `json:"sha256"`
	Data   string `json:"data"`
}

// blobSet is the blobs a session wrote to its log while open (one
// written before, by an earlier run of acpgate, is written again once).
// Safe for concurrent use.
type blobSet struct {
	mu      sync.Mutex
	written map[string]bool
}

// add records sum as written and reports whether it was not already.
func (b *blobSet) add(sum string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.written[sum] {
		return false
	}
	if b.written == nil {
		b.written = map[string]bool{}
	}
	b.written[sum] = true
	return true
}

// forget unrecords sum (its record could not be written).
func (b *blobSet) forget(sum string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.written, sum)
}

// storedMessages returns msgs as the log keeps them: each large part's
// data replaced by its blob's reference, the blob written first (by put,
// for a blob not written yet). msgs is not modified.
func storedMessages(msgs []gateway.Message, put func(storedBlob)) []gateway.Message {
	out := make([]gateway.Message, len(msgs))
	for i, m := range msgs {
		m.Content = storedParts(m.Content, put)
		if m.Result != nil {
			r := *m.Result
			r.Content = storedParts(r.Content, put)
			r.ModelContent = storedParts(r.ModelContent, put)
			m.Result = &r
		}
		out[i] = m
	}
	return out
}

// storedParts is storedMessages for one list of parts.
func storedParts(parts []gateway.Content, put func(storedBlob)) []gateway.Content {
	var out []gateway.Content
	for i, c := range parts {
		if len(c.Data) <= minBlobBytes || strings.HasPrefix(c.Data, blobRef) {
			continue
		}
		if out == nil {
			out = append([]gateway.Content(nil), parts...)
		}
		if len(c.Data) > maxBlobBytes {
			out[i] = gateway.Content{Type: gateway.ContentText, Text: fmt.Sprintf("[%s (%s, %d bytes base64) not kept in the session log: over %d bytes]", c.Type, c.MIMEType, len(c.Data), maxBlobBytes)}
			continue
		}
		sum := sha256.Sum256([]byte(c.Data))
		h := hex.EncodeToString(sum[:])
		put(storedBlob{SHA256: h, Data: c.Data})
		out[i].Data = blobRef + h
	}
	if out == nil {
		return parts
	}
	return out
}

// blobIndex is the blobs of a log being loaded, by hash.
type blobIndex map[string]string

// add notes a blob record.
func (ix blobIndex) add(data json.RawMessage) {
	var b storedBlob
	if json.Unmarshal(data, &b) == nil && b.SHA256 != "" {
		ix[b.SHA256] = b.Data
	}
}

// resolve returns msgs with each blob reference replaced by the blob's
// data (a reference to a blob the log lacks becomes a note). msgs' own
// parts are changed in place: they are the load's.
func (ix blobIndex) resolve(msgs []gateway.Message) {
	for i := range msgs {
		m := &msgs[i]
		ix.parts(m.Content)
		if m.Result != nil {
			ix.parts(m.Result.Content)
			ix.parts(m.Result.ModelContent)
		}
	}
}

func (ix blobIndex) parts(parts []gateway.Content) {
	for i, c := range parts {
		h, ok := strings.CutPrefix(c.Data, blobRef)
		if !ok {
			continue
		}
		if data, ok := ix[h]; ok {
			parts[i].Data = data
			continue
		}
		parts[i] = gateway.Content{Type: gateway.ContentText, Text: fmt.Sprintf("[%s (%s) missing from the session log]", c.Type, c.MIMEType)}
	}
}
