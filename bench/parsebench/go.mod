module github.com/skillgate/skillgate/bench/parsebench

go 1.26.8

require (
	github.com/dop251/goja v0.0.0-20260917113740-793a2a65c13b
	github.com/go-python/gpython v0.2.0
	mvdan.cc/sh/v3 v3.14.1
)

require (
	github.com/go-sourcemap/sourcemap v2.1.3+incompatible // indirect
	github.com/skillgate/skillgate v0.0.0
	golang.org/x/text v0.43.0 // indirect
)

replace github.com/skillgate/skillgate => ../..
