package shellscan

import (
	"bufio"
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// corpusDir is the public skill corpus (SKILLGATE_CORPUS, or shared/corpus
// beside the worktrees' folder), or "" when it is absent.
func corpusDir() string {
	if d := os.Getenv("SKILLGATE_CORPUS"); d != "" {
		return d
	}
	for _, d := range []string{
		filepath.Join("..", "..", "..", "..", "..", "shared", "corpus"),
		filepath.Join("..", "..", "..", "..", "..", "..", "shared", "corpus"),
	} {
		if _, err := os.Stat(filepath.Join(d, "verdicts.jsonl")); err == nil {
			return d
		}
	}
	return ""
}

var fence = regexp.MustCompile("^\\s*```+\\s*(bash|sh|shell|zsh|console)\\s*$")

// TestCorpus analyzes the shell scripts of the benign public corpus (.sh,
// .bash and #! sh or bash files), which must all parse and give no finding
// and no threat (but those listed in justified),
// and logs what the fenced shell blocks of its Markdown files give: there an
// install line such as curl … | sh is documentation a reader may follow, a
// matter for the rule's severity, not for the parser.
func TestCorpus(t *testing.T) {
	dir := corpusDir()
	if dir == "" {
		t.Skip("the skill corpus (shared/corpus) is absent")
	}
	scripts, blocks, blockErrs := 0, 0, 0
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		ext := filepath.Ext(path)
		switch {
		case ext == ".sh" || ext == ".bash" || bytes.HasPrefix(src, []byte("#!/bin/bash")) ||
			bytes.HasPrefix(src, []byte("#!/usr/bin/env bash")) || bytes.HasPrefix(src, []byte("#!/bin/sh")):
			scripts++
			sc, err := Analyze(src, path)
			if err != nil {
				t.Errorf("%v", err)
				return nil
			}
			for _, f := range sc.Findings {
				t.Errorf("%s: %s", path, f)
			}
			for _, th := range sc.Threats {
				if !justified[filepath.Base(filepath.Dir(filepath.Dir(path)))+"/"+filepath.Base(path)+":"+string(th.Rule)] {
					t.Errorf("%s: %s", path, th)
				}
			}
		case ext == ".md":
			for _, b := range fencedShell(src) {
				blocks++
				sc, err := Analyze([]byte(b.text), path)
				if errors.Is(err, ErrParse) {
					blockErrs++
					continue
				}
				for _, f := range sc.Findings {
					t.Logf("%s:%d: %s", path, b.line+f.RunLine, f)
				}
				for _, th := range sc.Threats {
					t.Logf("%s:%d: %s", path, b.line+th.Line, th)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d scripts, %d fenced shell blocks in Markdown (%d do not parse)", scripts, blocks, blockErrs)
}

// justified are the threats the corpus's scripts have that are what they
// say, by skill folder, file name and rule: each is reviewed.
var justified = map[string]bool{}

type block struct {
	line int // the fence's line
	text string
}

func fencedShell(src []byte) []block {
	var out []block
	var cur *strings.Builder
	start := 0
	sc := bufio.NewScanner(bytes.NewReader(src))
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case cur == nil && fence.MatchString(line):
			cur, start = &strings.Builder{}, n
		case cur != nil && strings.HasPrefix(strings.TrimSpace(line), "```"):
			out = append(out, block{start, cur.String()})
			cur = nil
		case cur != nil:
			cur.WriteString(line + "\n")
		}
	}
	return out
}
