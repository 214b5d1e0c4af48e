// Command bootbench measures `skillgate serve` start-up with a scan at
// boot against a scan alone, on the same tree and in the same run: the
// time from process start to the first successful answer (GET /v1/health,
// which the server answers only once it listens, after its scan at start)
// on a fresh data directory, against the wall time of
// `skillgate scan --root TREE` on another fresh data directory. The two are
// alternated, RUNS times each; it prints the medians (best), the ratio
// of the medians and PASS or FAIL against -max-ratio, and exits 1 on FAIL,
// 2 on a set-up error. bench/bootscan.sh builds and runs it.
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

func main() { os.Exit(run()) }

// run measures and reports; it returns the exit status.
func run() int {
	bin := flag.String("skillgate", "", "the skillgate binary")
	tree := flag.String("tree", "", "the tree of skills (bench/gen)")
	runs := flag.Int("runs", 5, "runs of each measurement")
	maxRatio := flag.Float64("max-ratio", 1.5, "the goal: serve start-up at most this times a scan alone")
	timeout := flag.Duration("timeout", 5*time.Minute, "the longest one start-up may take")
	flag.Parse()
	if *bin == "" || *tree == "" || *runs < 1 {
		fmt.Fprintln(os.Stderr, "bootbench: -skillgate and -tree are required, -runs must be positive")
		return 2
	}
	work, err := os.MkdirTemp("", "skillgate-bootbench-")
	if err != nil {
		return fail(err)
	}
	defer os.RemoveAll(work)
	var scans, serves []time.Duration
	var skills string
	for i := 0; i < *runs; i++ {
		d, err := scanAlone(*bin, *tree, filepath.Join(work, fmt.Sprintf("scan-%d", i)))
		if err != nil {
			return fail(err)
		}
		scans = append(scans, d)
		d, n, err := serveStart(*bin, *tree, filepath.Join(work, fmt.Sprintf("serve-%d", i)), *timeout)
		if err != nil {
			return fail(err)
		}
		serves = append(serves, d)
		skills = n
		fmt.Fprintf(os.Stderr, "bootbench: run %d/%d: scan %d ms, serve to first answer %d ms\n", i+1, *runs, scans[i].Milliseconds(), d.Milliseconds())
	}
	scanMed, serveMed := median(scans), median(serves)
	ratio := float64(serveMed) / float64(scanMed)
	verdict := "PASS"
	if ratio > *maxRatio {
		verdict = "FAIL"
	}
	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Printf("serve start-up with a scan at boot vs a scan alone: %s skills, %d runs each, load average at the end: %s\n", skills, *runs, strings.Join(strings.Fields(string(load))[:3], " "))
	fmt.Printf("| %-52s | %-20s |\n", "measurement", "median (best)")
	fmt.Printf("| %-52s | %-20s |\n", strings.Repeat("-", 52), strings.Repeat("-", 20))
	fmt.Printf("| %-52s | %-20s |\n", "scan alone (skillgate scan, fresh data directory)", fmt.Sprintf("%d ms (%d)", scanMed.Milliseconds(), slices.Min(scans).Milliseconds()))
	fmt.Printf("| %-52s | %-20s |\n", "serve: process start to first answer (fresh data)", fmt.Sprintf("%d ms (%d)", serveMed.Milliseconds(), slices.Min(serves).Milliseconds()))
	fmt.Printf("| %-52s | %-20s |\n", fmt.Sprintf("ratio (goal <= %.1fx)", *maxRatio), fmt.Sprintf("%.2fx %s", ratio, verdict))
	if verdict == "FAIL" {
		return 1
	}
	return 0
}

func fail(err error) int {
	fmt.Fprintln(os.Stderr, "bootbench:", err)
	return 2
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// config lifts the per-root bound of 2,000 directories, as scan.sh's
// --max-dirs does, for both measurements.
const config = "limits:\n  max_dirs: 1000000\n"

func freshData(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "config.yaml"), []byte(config), 0o644)
}

// scanAlone times `skillgate scan` of tree into a fresh data directory.
func scanAlone(bin, tree, data string) (time.Duration, error) {
	if err := freshData(data); err != nil {
		return 0, err
	}
	cmd := exec.Command(bin, "--data", data, "scan", "--root", tree, "--json")
	var stderr strings.Builder
	cmd.Stdout, cmd.Stderr = io.Discard, &stderr
	start := time.Now()
	if err := cmd.Run(); err != nil {
		return 0, fmt.Errorf("skillgate scan: %w: %s", err, stderr.String())
	}
	d := time.Since(start)
	return d, os.RemoveAll(data)
}

var scannedRE = regexp.MustCompile(`scanned at start \([^)]*\): (\d+) skills`)

// serveStart times `skillgate serve --root tree` on a fresh data directory
// from its start to its first successful answer, and returns how many
// skills it said it scanned.
func serveStart(bin, tree, data string, timeout time.Duration) (time.Duration, string, error) {
	if err := freshData(data); err != nil {
		return 0, "", err
	}
	addr, err := freePort()
	if err != nil {
		return 0, "", err
	}
	cmd := exec.Command(bin, "--data", data, "serve", "--addr", addr, "--root", tree)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return 0, "", err
	}
	skills := make(chan string, 1)
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return 0, "", err
	}
	stop := sync.OnceFunc(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait() // stopped by the signal: its status says so
	})
	defer func() {
		stop()
		os.RemoveAll(data)
	}()
	go func() {
		sc := bufio.NewScanner(stderr)
		n := "?"
		for sc.Scan() {
			if m := scannedRE.FindStringSubmatch(sc.Text()); m != nil {
				n = m[1]
			}
		}
		skills <- n
	}()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	client := &http.Client{Timeout: time.Second}
	url := "http://" + addr + "/v1/health"
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		resp, err := client.Do(req)
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if ctx.Err() != nil {
			return 0, "", errors.New("skillgate serve did not answer in time")
		}
		time.Sleep(2 * time.Millisecond)
	}
	d := time.Since(start)
	stop()
	n := <-skills
	if _, err := strconv.Atoi(n); err != nil {
		return 0, "", fmt.Errorf("skillgate serve did not say it scanned at start")
	}
	return d, n, nil
}

// freePort returns a loopback address no one listens on now.
func freePort() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}
