// Package search ranks skills by relevance to a text query: what an agent
// (skill_list's query), an operator ('skillgate search') or the console
// types to find the skill for a task. It owns the tokenisation of a
// skill's name, category and description, the BM25F index built once per
// catalog snapshot, and the order of results (an exact name first, then
// by score, then by document order).
//
// BM25F is one [Ranker]; an embedding ranker can be added behind the same
// interface without changing its callers. The package knows nothing of
// the store or the registry: documents are numbered by their caller.
package search
