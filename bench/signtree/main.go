// Command signtree signs every skill under a directory with a new key, for
// bench/signing.sh: it writes the key pair to -keys and prints how many
// skills it signed and how many it left unsigned (invalid skills cannot
// be signed). With -index FILE it also signs the whole tree in one signed
// index (skillgate sign --root) and moves the index to FILE, so that the
// benchmark can put it in place for the runs that use it; it then prints
// how many skills the index lists as a third number.
//
// Usage: signtree -dir TREE -keys DIR [-index FILE]
package main

import (
	"context"
	"crypto/ed25519"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/skillgate/skillgate/internal/registry/discover"
	"github.com/skillgate/skillgate/internal/registry/signature"
)

func main() {
	dir := flag.String("dir", "", "tree of skills to sign (required)")
	keys := flag.String("keys", "", "directory for bench.key and bench.pub (required)")
	index := flag.String("index", "", "also sign the tree in one index and move it to this file")
	flag.Parse()
	if *dir == "" || *keys == "" {
		flag.Usage()
		os.Exit(2)
	}
	if err := run(*dir, *keys, *index); err != nil {
		fmt.Fprintln(os.Stderr, "signtree:", err)
		os.Exit(1)
	}
}

func run(dir, keys, index string) error {
	priv, err := signature.GenerateKey(nil)
	if err != nil {
		return err
	}
	privPEM, err := signature.MarshalPrivateKey(priv)
	if err != nil {
		return err
	}
	pubPEM, err := signature.MarshalPublicKey(priv.Public().(ed25519.PublicKey))
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(keys, "bench.key"), privPEM, 0o600); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(keys, "bench.pub"), pubPEM, 0o644); err != nil {
		return err
	}
	var dirs []string
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && d.Name() == "SKILL.md" {
			dirs = append(dirs, filepath.Dir(p))
		}
		return nil
	})
	if err != nil {
		return err
	}
	var signed, unsigned atomic.Int64
	work := make(chan string)
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for d := range work {
				if _, err := signature.Sign(context.Background(), d, priv, signature.SignOptions{Signer: "bench"}); err != nil {
					unsigned.Add(1)
					continue
				}
				signed.Add(1)
			}
		}()
	}
	for _, d := range dirs {
		work <- d
	}
	close(work)
	wg.Wait()
	if index == "" {
		fmt.Printf("%d %d\n", signed.Load(), unsigned.Load())
		return nil
	}
	lim := discover.DefaultLimits
	lim.MaxDirs = 1 << 20
	ix, err := signature.SignRoot(context.Background(), dir, priv, signature.IndexOptions{SignOptions: signature.SignOptions{Signer: "bench"}, Limits: lim})
	if err != nil {
		return err
	}
	if err := os.Rename(ix.Path, index); err != nil {
		return err
	}
	fmt.Printf("%d %d %d\n", signed.Load(), unsigned.Load(), ix.Skills)
	return nil
}
