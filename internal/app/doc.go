// Package app is skillgate's application: what a command of the CLI runs
// once its flags are read. It owns assembling the metadata store, the
// registry and the capability runtime from the configuration (config.yaml,
// loaded and validated here), the serve loop with its signals and rescans,
// leader election and the replicas on a shared store, audit checkpoints,
// session maintenance and the reload of bearer tokens, and what each
// command does once its flags are read: checking and parsing their values
// (tiers, principals, times, filters, requests), opening what it needs
// and returning its result (installs, credentials, sessions, tokens,
// grants, stored policies, signatures, locks, executors, connections).
//
// Only cmd/ imports it: it is the part just below the wiring, and it must
// not be imported by any other part. It may import every part below it,
// and it is where the storage drivers are chosen. cmd keeps flags, help
// text, the choice of JSON or text and exit codes. The text of a report
// is rendered beside its type: app's results here (text.go), a part's
// own types in that part (registry.ScanReport.WriteText, change.Item,
// audit.WriteRecords, ...), cmd passing the writers. app returns
// errors, marking with [UsageError] the ones the operator fixes by
// invoking skillgate differently (cmd exits 2 for them).
package app
