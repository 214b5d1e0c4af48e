//go:build nolineage

package main

import "github.com/skillgate/skillgate/internal/admission/secscan"

// references is off in a build for a base revision that predates lineage
// (bench/scanner.sh --base REF builds this harness with -tags nolineage
// there): nothing is applied.
type references struct{}

func loadReferences(string) (*references, error) { return nil, nil }

func (*references) apply(string, string, *secscan.Report) error { return nil }
