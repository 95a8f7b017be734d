package session

import "os"

// SetDatasync replaces how s flushes session logs to stable storage, so
// that tests can observe, hold and fail the datasyncs. Call it before any
// session of s is opened.
func SetDatasync(s *Store, fn func(*os.File) error) { s.datasync = fn }

// RecordLine is recordLine, the log line of a record.
var RecordLine = recordLine
