// Package admission groups how a third-party skill gets in: install
// sources, admission layers, analysis, approval and drift (install), the
// content scanner (secscan), the reference skills a scanned skill is
// compared with (lineage), manifests and install reports (manifest),
// manifest proposals (propose), promote_provider drafts (promote) and the
// changes queue (change).
//
// The part imports the parts below it except the agent interface: it
// must not import internal/agent (the Skills extension's formats it checks
// are internal/model/skillsext), the gateway, the edges or the application.
package admission
