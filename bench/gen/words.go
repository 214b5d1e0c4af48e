package main

// Word banks for the generator. Changing any of them changes the generated
// tree for every seed, so bump generatorVersion in main.go when you do.

// category is one top-level directory of the generated tree, with the nouns
// its skills are about and the tools they mention.
type category struct {
	name  string
	nouns []string
	tools []string
}

var categories = []category{
	{"data-analysis", []string{"csv-files", "dataframes", "pivot-tables", "survey-data", "time-series", "cohorts", "kpis", "outliers"}, []string{"pandas", "duckdb", "polars"}},
	{"data-engineering", []string{"etl-jobs", "parquet-files", "schemas", "pipelines", "partitions", "data-contracts", "backfills"}, []string{"airflow", "dbt", "spark"}},
	{"machine-learning", []string{"models", "datasets", "features", "embeddings", "experiments", "checkpoints", "hyperparameters"}, []string{"pytorch", "scikit-learn", "mlflow"}},
	{"devops", []string{"pipelines", "releases", "runbooks", "build-caches", "artifacts", "rollouts", "incidents"}, []string{"github-actions", "make", "docker"}},
	{"cloud-aws", []string{"s3-buckets", "iam-policies", "lambda-functions", "cloudformation-stacks", "vpcs", "cost-reports"}, []string{"aws-cli", "cdk", "terraform"}},
	{"cloud-azure", []string{"resource-groups", "bicep-templates", "app-services", "key-vaults", "role-assignments", "cosmos-databases"}, []string{"az-cli", "bicep", "terraform"}},
	{"cloud-gcp", []string{"bigquery-tables", "cloud-run-services", "gcs-buckets", "service-accounts", "pubsub-topics"}, []string{"gcloud", "terraform", "bq"}},
	{"kubernetes", []string{"helm-charts", "manifests", "deployments", "pod-logs", "network-policies", "crds", "namespaces"}, []string{"kubectl", "helm", "kustomize"}},
	{"security", []string{"vulnerabilities", "secrets", "sbom-files", "threat-models", "dependencies", "audit-logs", "certificates"}, []string{"trivy", "semgrep", "openssl"}},
	{"compliance", []string{"controls", "evidence", "policies", "soc2-reports", "gdpr-requests", "risk-registers"}, []string{"vanta", "spreadsheets", "jira"}},
	{"frontend", []string{"react-components", "css-modules", "storybook-stories", "forms", "bundles", "accessibility-issues"}, []string{"vite", "eslint", "playwright"}},
	{"backend", []string{"rest-apis", "grpc-services", "handlers", "migrations", "rate-limits", "queues", "webhooks"}, []string{"go", "openapi", "postgres"}},
	{"mobile", []string{"ios-builds", "android-builds", "crash-reports", "app-store-listings", "push-notifications"}, []string{"xcodebuild", "gradle", "fastlane"}},
	{"databases", []string{"sql-queries", "indexes", "query-plans", "backups", "replicas", "schemas", "slow-queries"}, []string{"psql", "sqlite3", "mysql"}},
	{"testing", []string{"unit-tests", "flaky-tests", "fixtures", "coverage-reports", "snapshots", "e2e-suites", "mocks"}, []string{"pytest", "go-test", "jest"}},
	{"documentation", []string{"readmes", "api-docs", "changelogs", "adrs", "docstrings", "tutorials", "release-notes"}, []string{"mkdocs", "sphinx", "pandoc"}},
	{"writing", []string{"blog-posts", "essays", "newsletters", "outlines", "headlines", "press-releases"}, []string{"vale", "pandoc", "markdown"}},
	{"legal", []string{"contracts", "nda-drafts", "clauses", "deeds", "privacy-notices", "license-files"}, []string{"docx", "pdf", "redline"}},
	{"finance", []string{"invoices", "budgets", "forecasts", "pnl-statements", "cash-flows", "expense-reports"}, []string{"excel", "pandas", "quickbooks"}},
	{"accounting", []string{"ledgers", "journal-entries", "reconciliations", "tax-forms", "receipts", "trial-balances"}, []string{"xero", "csv", "beancount"}},
	{"marketing", []string{"campaigns", "landing-pages", "ad-copy", "seo-audits", "email-sequences", "personas"}, []string{"google-analytics", "hubspot", "mailchimp"}},
	{"sales", []string{"leads", "proposals", "call-notes", "pipelines", "quotes", "account-plans"}, []string{"salesforce", "hubspot", "gong"}},
	{"customer-support", []string{"tickets", "macros", "faq-entries", "escalations", "csat-surveys", "help-articles"}, []string{"zendesk", "intercom", "freshdesk"}},
	{"hr", []string{"job-descriptions", "interview-plans", "onboarding-checklists", "offer-letters", "reviews"}, []string{"greenhouse", "workday", "docs"}},
	{"project-management", []string{"roadmaps", "sprints", "status-reports", "milestones", "risks", "okrs", "retros"}, []string{"jira", "linear", "asana"}},
	{"design", []string{"wireframes", "design-tokens", "icons", "color-palettes", "mockups", "style-guides"}, []string{"figma", "svgo", "tailwind"}},
	{"productivity", []string{"meeting-notes", "todo-lists", "calendars", "emails", "weekly-reviews", "agendas"}, []string{"google-calendar", "notion", "obsidian"}},
	{"research", []string{"papers", "citations", "literature-reviews", "abstracts", "datasets", "hypotheses"}, []string{"zotero", "arxiv", "bibtex"}},
	{"bioinformatics", []string{"fastq-files", "variants", "alignments", "gene-sets", "phylogenies", "protein-structures"}, []string{"samtools", "biopython", "blast"}},
	{"chemistry", []string{"molecules", "reactions", "spectra", "smiles-strings", "compound-libraries"}, []string{"rdkit", "openbabel", "pubchem"}},
	{"physics", []string{"simulations", "measurements", "units", "trajectories", "spectra", "lattices"}, []string{"numpy", "scipy", "astropy"}},
	{"mathematics", []string{"proofs", "equations", "matrices", "integrals", "sequences", "graphs"}, []string{"sympy", "lean", "latex"}},
	{"education", []string{"lesson-plans", "quizzes", "rubrics", "flashcards", "syllabi", "worksheets"}, []string{"anki", "moodle", "markdown"}},
	{"healthcare", []string{"clinical-notes", "fhir-resources", "icd-codes", "lab-results", "discharge-summaries"}, []string{"fhir", "hl7", "snomed"}},
	{"geospatial", []string{"shapefiles", "geojson-layers", "rasters", "routes", "tiles", "coordinates"}, []string{"gdal", "qgis", "postgis"}},
	{"media", []string{"podcasts", "transcripts", "show-notes", "thumbnails", "captions", "rss-feeds"}, []string{"ffmpeg", "whisper", "yt-dlp"}},
	{"audio", []string{"recordings", "stems", "loudness-levels", "playlists", "waveforms", "midi-files"}, []string{"ffmpeg", "sox", "librosa"}},
	{"video", []string{"clips", "subtitles", "storyboards", "encodes", "timelines", "frames"}, []string{"ffmpeg", "handbrake", "opencv"}},
	{"image-processing", []string{"images", "photos", "screenshots", "sprites", "thumbnails", "exif-data"}, []string{"imagemagick", "pillow", "libvips"}},
	{"web-scraping", []string{"web-pages", "sitemaps", "product-listings", "html-tables", "robots-files"}, []string{"playwright", "beautifulsoup", "curl"}},
	{"api-integration", []string{"oauth-flows", "webhooks", "sdk-clients", "openapi-specs", "graphql-schemas", "rate-limits"}, []string{"curl", "httpie", "postman"}},
	{"automation", []string{"cron-jobs", "shell-scripts", "workflows", "file-watchers", "bulk-renames", "backups"}, []string{"bash", "make", "n8n"}},
	{"git-workflows", []string{"commits", "branches", "pull-requests", "merge-conflicts", "tags", "monorepos"}, []string{"git", "gh", "pre-commit"}},
	{"code-review", []string{"diffs", "review-comments", "style-violations", "code-smells", "complexity-reports"}, []string{"gh", "reviewdog", "sonarqube"}},
	{"observability", []string{"dashboards", "alerts", "traces", "metrics", "log-queries", "slos"}, []string{"prometheus", "grafana", "opentelemetry"}},
	{"networking", []string{"dns-records", "firewall-rules", "tls-configs", "packet-captures", "load-balancers"}, []string{"dig", "tcpdump", "nmap"}},
	{"embedded", []string{"firmware", "device-trees", "sensor-readings", "register-maps", "bootloaders"}, []string{"platformio", "openocd", "zephyr"}},
	{"game-dev", []string{"levels", "shaders", "sprites", "save-files", "dialogue-trees", "game-assets"}, []string{"godot", "unity", "blender"}},
	{"localization", []string{"translations", "po-files", "glossaries", "string-tables", "locale-configs"}, []string{"gettext", "crowdin", "icu"}},
	{"spreadsheets", []string{"workbooks", "formulas", "charts", "named-ranges", "sheets", "conditional-formats"}, []string{"excel", "openpyxl", "google-sheets"}},
}

var verbs = []string{
	"analyze", "audit", "build", "check", "clean", "compare", "convert", "create", "debug",
	"deploy", "design", "draft", "explain", "export", "extract", "format", "generate", "import",
	"inspect", "lint", "merge", "migrate", "monitor", "optimize", "parse", "plan", "profile",
	"refactor", "render", "review", "scaffold", "summarize", "sync", "test", "triage",
	"translate", "validate", "visualize", "write",
}

// qualifiers end a name. "old" is reserved for the name-mismatch invalid kind.
var qualifiers = []string{
	"helper", "assistant", "toolkit", "workflow", "checklist", "pipeline", "guide", "cli",
	"batch", "lite", "pro", "kit", "expert", "studio", "bot", "runner",
}

var purposes = []string{
	"with consistent formatting and clear error messages",
	"and flags anything that needs a human decision",
	"following the team's house style",
	"in a reproducible, scriptable way",
	"without touching files outside the working directory",
	"and writes a short summary of what changed",
	"using the bundled helper scripts",
	"with sensible defaults and an explicit dry-run mode",
	"while keeping a log of every step",
	"and checks the result before reporting success",
}

var triggers = []string{
	"the user asks to {v} {n}",
	"working with {n} in an existing project",
	"the user mentions {n}, {n} or {t}",
	"a task involves {n} and needs a repeatable process",
	"the user wants a review of their {n}",
	"preparing {n} for a release or hand-off",
	"a request names {t} or asks about {n}",
}

// extras are the optional sentences of a description, each used at most once.
var extras = []string{
	"Supports {n}, {n} and {n}.",
	"Produces a Markdown report with findings ordered by severity.",
	"Do not use for one-off questions that need no files.",
	"Works offline once dependencies are installed.",
	"Requires {t} to be installed and on the PATH.",
	"Handles large inputs by processing them in batches.",
	"Keeps the original files untouched and writes results next to them.",
	"Includes templates for the most common {n}.",
	"Explains each change so it can be reviewed before it is applied.",
	"Falls back to {t} when the preferred tool is not available.",
	"Also covers {n} and {n} that come from {t}.",
	"Asks for confirmation before any destructive step.",
	"Reports progress after each batch so long runs can be followed.",
}

var subjects = []string{
	"This skill", "The script", "The helper", "Each step", "The agent", "The workflow",
	"The report", "The first pass", "The validator", "The template",
}

var actions = []string{
	"reads", "writes", "validates", "normalises", "collects", "summarises", "checks",
	"caches", "retries", "skips", "reports", "groups", "sorts", "compares", "annotates",
}

var objects = []string{
	"the input files", "every record", "the configuration", "intermediate results",
	"the final report", "missing values", "API responses", "the changelog", "the manifest",
	"duplicate entries", "the output directory", "each warning", "the selected rows",
}

var modifiers = []string{
	"before continuing", "in a single pass", "when the input is large",
	"unless --dry-run is set", "and logs a warning on failure", "so that reruns are idempotent",
	"using the bundled script", "within the configured limits", "in the order they were found",
	"and stops at the first hard error", "after asking for confirmation", "with a clear summary",
}

var sectionTitles = []string{
	"Overview", "When to use", "Prerequisites", "Workflow", "Steps", "Examples",
	"Troubleshooting", "Reference", "Notes", "Output format", "Configuration", "Limitations",
	"Best practices", "Common mistakes", "Checklist",
}

var licenses = []string{
	"MIT", "Apache-2.0", "BSD-3-Clause", "Proprietary. LICENSE.txt has complete terms", "CC-BY-4.0",
}

var compat = []string{
	"Requires Python 3.10+ and network access",
	"Designed for Claude Code and similar agents with shell access",
	"Needs git and a POSIX shell",
	"Requires Node.js 20 or newer",
	"Works on Linux and macOS; Windows needs WSL",
}

var allowedTools = []string{
	"Bash(git:*) Read Write",
	"Read Grep Glob",
	"Bash(python3:*) Read Edit",
	"Bash(jq:*) Bash(curl:*) Read",
	"Read Write Edit Bash",
}

var authors = []string{"example-org", "platform-team", "data-guild", "jane-doe", "acme-labs", "docs-team"}

// unknownKeys are top-level keys outside the specification and outside every
// vendor extension skillgate recognises.
var unknownKeys = []string{"author: Jane Doe", "owner: platform-team", "homepage: https://example.com/skills", "tags:\n  - internal\n  - beta"}
