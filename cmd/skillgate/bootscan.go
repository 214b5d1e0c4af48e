package main

import "github.com/skillgate/skillgate/internal/app"

// bootScanned writes what prog's scan at start did on stderr.
func (m *Main) bootScanned(prog string) func(*app.BootScan, error) {
	return func(bs *app.BootScan, err error) { app.WriteBootScan(m.Stderr, prog, bs, err) }
}
