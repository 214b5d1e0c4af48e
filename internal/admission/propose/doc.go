// Package propose drafts a skill's manifest at install time: which of the
// tools its MCP servers offer the skill needs, why, and under which optional
// constraints. A draft is only a proposal. Code checks it ([Validate]), a
// human approves it, and only the approved manifest is used at run time, so
// the proposer is called once per skill version and never again.
//
// Two proposers implement [Proposer]:
//
//   - [Deterministic] reads the skill's allowed-tools and the tool names its
//     SKILL.md mentions, and falls back to every tool when it names none.
//   - [OpenAI] asks a model behind any OpenAI-compatible chat completions API
//     (OpenAI, vLLM, Ollama, llama.cpp server) for a structured proposal.
//
// A tour:
//
//	in := propose.Input{
//		Skill:        s.ID(),
//		SkillMD:      content,
//		AllowedTools: s.AllowedTools,
//		Tools:        propose.ToolsFromCapabilities(report.Capabilities),
//	}
//	var p propose.Proposer = propose.Deterministic{}
//	if cfg, ok := propose.ConfigFromEnv(os.Getenv); ok {
//		llm, err := propose.NewOpenAI(cfg)
//		if err != nil { ... }        // wraps ErrInvalidConfig
//		p = llm
//	}
//	draft, err := p.Propose(ctx, in)
//	if err != nil { ... }            // an LLM failure: fall back, or block
//	proposal, corrections := propose.Validate(draft, in, constraintParser)
//
// Everything a proposer returns is untrusted, the model's output above all.
// [Validate] is the deterministic gate: its output names only tools that
// introspection reported, once each, in a fixed order, with constraints the
// caller's parser accepted, and never any risk metadata. Risk comes from the
// MCP server or an operator, never from a proposer.
package propose
