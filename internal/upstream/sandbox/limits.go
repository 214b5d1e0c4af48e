package sandbox

// Limits bound the resources of one confined server (setrlimit(2), set by
// the helper inside the sandbox before the server starts, soft and hard
// alike, so the server cannot raise them). A zero field takes its default;
// a negative one means no bound.
type Limits struct {
	// AddressSpace bounds virtual memory in bytes (RLIMIT_AS). Default
	// [DefaultMemoryBytes], 4 GiB.
	AddressSpace int64 `json:"addressSpace,omitempty"`
	// Processes bounds the processes and threads of the server's own user
	// namespace (RLIMIT_NPROC; each server has its own namespace, so the
	// count is per server). Default 256.
	Processes int64 `json:"processes,omitempty"`
	// OpenFiles bounds file descriptors (RLIMIT_NOFILE). Default 1024.
	OpenFiles int64 `json:"openFiles,omitempty"`
	// FileSize bounds the size of one file written, in bytes
	// (RLIMIT_FSIZE); it also bounds what a server can put in its private
	// /tmp, which is memory. Default 1 GiB.
	FileSize int64 `json:"fileSize,omitempty"`
	// CPUSeconds bounds the CPU time of each process over its whole life
	// (RLIMIT_CPU): a server that spins is killed, and the next call
	// starts it again. Default 3600.
	CPUSeconds int64 `json:"cpuSeconds,omitempty"`
	// TmpBytes bounds the private /tmp as a whole (it is memory): bwrap's
	// --size, where the installed bwrap has it (0.7 and later). Default
	// 256 MiB.
	TmpBytes int64 `json:"tmpBytes,omitempty"`
}

// Default limits; see [Limits].
const (
	DefaultProcesses  = 256
	DefaultOpenFiles  = 1024
	DefaultFileSize   = 1 << 30
	DefaultCPUSeconds = 3600
	DefaultTmpBytes   = 256 << 20
)

// WithDefaults returns l with every zero field set to its default and
// every negative one to 0 (no bound).
func (l Limits) WithDefaults() Limits {
	set := func(p *int64, d int64) {
		switch {
		case *p == 0:
			*p = d
		case *p < 0:
			*p = 0
		}
	}
	set(&l.AddressSpace, DefaultMemoryBytes)
	set(&l.Processes, DefaultProcesses)
	set(&l.OpenFiles, DefaultOpenFiles)
	set(&l.FileSize, DefaultFileSize)
	set(&l.CPUSeconds, DefaultCPUSeconds)
	set(&l.TmpBytes, DefaultTmpBytes)
	return l
}
