// Package model groups what skillgate's words mean, as types and checks
// with no I/O beyond reading what they are handed: a skill and its SKILL.md
// (skill), the vocabulary of capabilities, risk, principals and decision
// effects (capability), typed argument constraints (constraint), the
// lock file (lockfile) and the MCP Skills extension's formats (skillsext).
//
// The part imports only platform: it must not import storage, the registry,
// or anything that runs a server or makes a decision.
package model
