package main

import (
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
)

// memProfileEnv names the environment variable of a debugging hook: when
// it is set, acpgate writes a heap profile (pprof format) to the file it
// names as it exits after serving. Its alloc_space sample counts every
// allocation since the start by the code that made it, which is how the
// copies of a large result were found (docs/benchmarks.md, "Memory per
// result through the binary"):
//
//	ACPGATE_MEMPROFILE=/tmp/heap.pprof acpgate ...
//	go tool pprof -sample_index=alloc_space -top acpgate /tmp/heap.pprof
const memProfileEnv = "ACPGATE_MEMPROFILE"

// cpuProfileEnv names the environment variable of the other debugging
// hook: when it is set, acpgate profiles its CPU from the start of
// serving until it exits and writes the profile (pprof format) to the
// file it names. It is how the per-call cost of /call was found
// (docs/benchmarks.md, "acpgate end to end"):
//
//	ACPGATE_CPUPROFILE=/tmp/cpu.pprof acpgate ...
//	go tool pprof -top acpgate /tmp/cpu.pprof
const cpuProfileEnv = "ACPGATE_CPUPROFILE"

// startCPUProfile starts the CPU profile into path; the function it
// returns stops it and closes the file.
func startCPUProfile(path string) (stop func() error, err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", cpuProfileEnv, err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("%s: %w", cpuProfileEnv, err)
	}
	return func() error {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			return fmt.Errorf("%s: %w", cpuProfileEnv, err)
		}
		return nil
	}, nil
}

// writeMemProfile writes the heap profile to path.
func writeMemProfile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("%s: %w", memProfileEnv, err)
	}
	runtime.GC() // the in-use figures as of now, not as of the last collection
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		_ = f.Close()
		return fmt.Errorf("%s: writing the heap profile: %w", memProfileEnv, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("%s: %w", memProfileEnv, err)
	}
	return nil
}
