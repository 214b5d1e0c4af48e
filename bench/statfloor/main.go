//go:build linux

// Command statfloor is the floor of a no-change rescan: a process that
// stats every directory and file under a root, as skillgate's rescan must
// to see that nothing changed, and does nothing else. bench/scan.sh times
// it beside `skillgate scan`'s rescan of the same tree, so the rescan's
// own cost (start-up, opening the store, comparing records) shows as the
// difference, on whatever machine the benchmark runs.
//
//	go run ./bench/statfloor [-workers 4] DIR
//
// The listing is made first and not counted; the statx calls then go out
// from -workers goroutines, each relative to the root and without
// following a link, with the fields the rescan compares. It prints one
// JSON line: the entries stat'ed, the microseconds they took, and the CPU
// microseconds (user + system, all threads) they used.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

func main() {
	workers := flag.Int("workers", 4, "goroutines issuing statx calls (skillgate's rescan uses 4)")
	flag.Usage = func() {
		fmt.Fprintln(flag.CommandLine.Output(), "usage: statfloor [-workers N] DIR")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 1 || *workers < 1 {
		flag.Usage()
		os.Exit(2)
	}
	if err := run(flag.Arg(0), *workers); err != nil {
		fmt.Fprintln(os.Stderr, "statfloor:", err)
		os.Exit(1)
	}
}

func run(root string, workers int) error {
	var paths []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		paths = append(paths, rel)
		return nil
	})
	if err != nil {
		return fmt.Errorf("listing %s: %w", root, err)
	}
	rootfd, err := unix.Open(root, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("opening %s: %w", root, err)
	}
	defer unix.Close(rootfd)

	const mask = unix.STATX_TYPE | unix.STATX_SIZE | unix.STATX_MTIME | unix.STATX_CTIME
	var next atomic.Int64
	var failed atomic.Int64
	start := time.Now()
	cpu0 := cpuTime()
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var stx unix.Statx_t
			for {
				i := int(next.Add(1)) - 1
				if i >= len(paths) {
					return
				}
				if unix.Statx(rootfd, paths[i], unix.AT_SYMLINK_NOFOLLOW, mask, &stx) != nil {
					failed.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	took := time.Since(start)
	cpu := cpuTime() - cpu0
	if n := failed.Load(); n > 0 {
		return fmt.Errorf("%d of %d statx calls under %s failed", n, len(paths), root)
	}
	return json.NewEncoder(os.Stdout).Encode(struct {
		Entries int   `json:"entries"`
		Micros  int64 `json:"us"`
		CPU     int64 `json:"cpu_us"`
	}{len(paths), took.Microseconds(), cpu.Microseconds()})
}

// cpuTime is the process's user and system CPU time so far: the calls'
// own cost, which other processes on a busy machine do not inflate the
// way they do wall time.
func cpuTime() time.Duration {
	var ru unix.Rusage
	if unix.Getrusage(unix.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
