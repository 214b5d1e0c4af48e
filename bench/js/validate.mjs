#!/usr/bin/env node
// validate.mjs DIR...: validates every skill under DIR... with the npm package
// skills-ref (the JavaScript port of the Agent Skills reference validator),
// used as a library in this one Node process.
//
// A skill directory is a directory that holds SKILL.md (or skill.md, which
// skills-ref also accepts). Discovery descends into every directory except
// dot-directories and node_modules, including into skill directories (skills
// may nest). It is timed separately and is not part of "seconds".
//
// "seconds" times only the loop that awaits skills-ref's validate(dir) once
// per skill, one after the other, as a tool built on the library would.
//
// Output, one JSON object on stdout:
//   {"skills": N, "valid": N, "invalid": N, "seconds": S, "skills_per_sec": R,
//    "discovery_seconds": D, "skills_ref_version": V, "node_version": V}
// With --errors, also "errors": {dir: [message, ...]} for the invalid skills.
import { readdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { performance } from "node:perf_hooks";
import { validate, version as skillsRefVersion } from "skills-ref";

const args = process.argv.slice(2);
const withErrors = args.includes("--errors");
const roots = args.filter((a) => a !== "--errors");
if (roots.length === 0 || roots.some((a) => a.startsWith("-"))) {
  process.stderr.write("usage: node validate.mjs [--errors] DIR...\n");
  process.exit(2);
}

function discover(root, out) {
  let entries;
  try {
    entries = readdirSync(root, { withFileTypes: true });
  } catch (e) {
    process.stderr.write(`validate.mjs: ${root}: ${e.message}\n`);
    return;
  }
  const subdirs = [];
  let isSkill = false;
  for (const e of entries) {
    if (e.isFile() && (e.name === "SKILL.md" || e.name === "skill.md")) {
      isSkill = true;
    } else if (e.isDirectory() && !e.name.startsWith(".") && e.name !== "node_modules") {
      subdirs.push(e.name);
    }
  }
  if (isSkill) out.push(root);
  subdirs.sort();
  for (const d of subdirs) discover(join(root, d), out);
}

const t0 = performance.now();
const dirs = [];
for (const r of roots) discover(resolve(r), dirs);
const t1 = performance.now();

let valid = 0;
const errors = {};
for (const dir of dirs) {
  const errs = await validate(dir);
  if (errs.length === 0) {
    valid++;
  } else if (withErrors) {
    errors[dir] = errs;
  }
}
const t2 = performance.now();

const seconds = (t2 - t1) / 1000;
const result = {
  skills: dirs.length,
  valid,
  invalid: dirs.length - valid,
  seconds: Number(seconds.toFixed(4)),
  skills_per_sec: seconds > 0 ? Math.round(dirs.length / seconds) : null,
  discovery_seconds: Number(((t1 - t0) / 1000).toFixed(4)),
  skills_ref_version: skillsRefVersion,
  node_version: process.version,
};
if (withErrors) result.errors = errors;
process.stdout.write(JSON.stringify(result) + "\n");
