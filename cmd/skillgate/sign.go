package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/skillgate/skillgate/internal/app"
	"github.com/skillgate/skillgate/internal/platform/jsonout"
	"github.com/skillgate/skillgate/internal/registry/signature"
)

func (m *Main) keyCommand() *cobra.Command {
	c := &cobra.Command{
		Use:   "key gen NAME",
		Short: "Make signing keys for skills",
		Long: `Make an Ed25519 key pair for signing skills ('skillgate sign'). The private
key is written to NAME.key (mode 0600, PKCS #8 PEM): keep it off the servers
that verify. The public key, NAME.pub (PKIX PEM), is what you share: trust it
under signing.keys in config.yaml (see docs/supply-chain.md).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return usageErr("key needs a subcommand: gen (see 'skillgate key --help')")
		},
	}
	var dir string
	var asJSON bool
	gen := &cobra.Command{
		Use:     "gen NAME [--dir DIR] [--json]",
		Short:   "Make a key pair: DIR/NAME.key (private, 0600) and DIR/NAME.pub",
		Example: "  skillgate key gen release-2026 --dir ~/.config/skillgate/keys",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			kp, err := app.GenerateKey(dir, args[0])
			if err != nil {
				return failure(err)
			}
			if asJSON {
				return jsonout.Write(m.Stdout, kp)
			}
			fmt.Fprintf(m.Stdout, "%s", kp.PublicPEM)
			fmt.Fprintf(m.Stderr, "key %s (%s): private key %s (keep it secret), public key %s\n", kp.Name, kp.KeyID, kp.PrivateKey, kp.PublicKey)
			return nil
		},
	}
	gen.Flags().StringVar(&dir, "dir", ".", "directory to write NAME.key and NAME.pub in")
	gen.Flags().BoolVar(&asJSON, "json", false, "print the key's name, id, files and public key as JSON")
	c.AddCommand(gen)
	return c
}

func (m *Main) signCommand() *cobra.Command {
	var keyFile, signer, trust, root string
	var maxDepth, maxDirs int
	var asJSON bool
	c := &cobra.Command{
		Use:   "sign (DIR | --root ROOT) --key FILE [--signer NAME] [--trust first_party|imported] [--json]",
		Short: "Sign a skill (DIR/.skillgate.dsse.json) or every skill of a root (ROOT/.skillgate-index.dsse.json)",
		Long: `Sign the skill in DIR with a private key from 'skillgate key gen'. The
signature is a DSSE envelope of an in-toto Statement v1 over the skill's
content digest (the digest 'skillgate scan' records), naming the signer,
the time, the trust tier it is signed for and the digest of the skill's
manifest.json. It is written to DIR/.skillgate.dsse.json, which is not part
of the digest. Any later change to the skill invalidates the signature:
sign again after reviewing the change. Nothing else in skillgate ever signs.

With --root ROOT, sign every skill under ROOT (found as 'skillgate scan'
finds them, within --max-depth and --max-dirs) in one signed index,
ROOT/.skillgate-index.dsse.json: one envelope whose statement has a subject
per skill (its path under ROOT and its content digest) and the same
predicate. A scan of a first_party root verifies the index once, instead of
one signature per skill. Invalid skills are left out and listed.`,
		Example: "  skillgate sign skills/pdf-tools --key release-2026.key --signer 'Release team'\n  skillgate sign --root skills --key release-2026.key --signer 'Release team'",
		Args:    cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var dir string
			if len(args) > 0 {
				dir = args[0]
			}
			sg, err := m.app().Sign(cmd.Context(), app.SignRequest{Dir: dir, Root: root, KeyFile: keyFile, Signer: signer, Trust: trust, MaxDepth: maxDepth, MaxDirs: maxDirs})
			if err != nil {
				return failure(err)
			}
			if asJSON {
				return jsonout.Write(m.Stdout, sg.JSON())
			}
			sg.WriteText(m.Stdout, m.Stderr)
			return nil
		},
	}
	c.Flags().StringVar(&keyFile, "key", "", "private key file (from 'skillgate key gen')")
	c.Flags().StringVar(&signer, "signer", "", "who signs (default: the key file's name)")
	c.Flags().StringVar(&trust, "trust", signature.TrustFirstParty, "trust tier the skill is signed for: first_party or imported")
	c.Flags().StringVar(&root, "root", "", "sign every skill under this root in one index, ROOT/"+signature.IndexFileName)
	c.Flags().IntVar(&maxDepth, "max-depth", 0, "with --root: how deep below the root skills are found (default 6, as scan)")
	c.Flags().IntVar(&maxDirs, "max-dirs", 0, "with --root: directories read before stopping (default 2000, as scan)")
	c.Flags().BoolVar(&asJSON, "json", false, "print what was signed as JSON")
	return c
}

func (m *Main) verifySignatureCommand() *cobra.Command {
	var trust, root string
	var asJSON bool
	c := &cobra.Command{
		Use:   "verify-signature DIR [--root ROOT] [--trust first_party|imported] [--json]",
		Short: "Check a skill's signature, or a root's signed index, against the trusted keys",
		Long: `Check the signature of the skill in DIR: a well-formed envelope, signed by a
key trusted for the tier (signing.keys in config.yaml) that is within its
validity window and not revoked, over the skill's current content and
manifest.json. The signature is DIR/.skillgate.dsse.json or, with --root
ROOT, ROOT's signed index (ROOT/.skillgate-index.dsse.json) when it lists
the skill, as a scan of ROOT checks it.

When DIR holds a signed index (it was signed with 'sign --root'), the index
is checked, then every skill it lists against it: one line per skill that
is not valid.

Exit 0 when valid; 1 with the reason when not (unsigned, malformed,
untrusted_key, invalid_signature, revoked, expired, modified, wrong_skill);
2 on a usage or configuration error.`,
		Example: "  skillgate verify-signature skills/pdf-tools --config config.yaml\n  skillgate verify-signature skills --config config.yaml",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			sc, err := m.app().VerifySignature(cmd.Context(), args[0], root, trust)
			if err != nil {
				return err
			}
			if sc.Index != nil {
				return m.indexOut(sc.Index, args[0], asJSON)
			}
			v, verr := sc.Verdict, sc.Err
			if asJSON {
				if err := jsonout.Write(m.Stdout, v); err != nil {
					return err
				}
				if verr != nil {
					return errFailed
				}
				return nil
			}
			if verr != nil {
				return &exitError{code: exitFail, err: verr}
			}
			v.WriteText(m.Stdout)
			return nil
		},
	}
	c.Flags().StringVar(&trust, "trust", signature.TrustFirstParty, "trust tier to verify for: first_party or imported")
	c.Flags().StringVar(&root, "root", "", "the root DIR is scanned under: its signed index vouches for DIR when it lists it")
	c.Flags().BoolVar(&asJSON, "json", false, "print the verdict and provenance as JSON")
	return c
}

// indexOut prints the verdict on a root's signed index and sets the exit
// code.
func (m *Main) indexOut(out *app.IndexReport, root string, asJSON bool) error {
	if asJSON {
		if err := jsonout.Write(m.Stdout, out); err != nil {
			return err
		}
		if !out.Valid {
			return errFailed
		}
		return nil
	}
	if err := out.WriteText(m.Stdout, m.Stderr, root); err != nil {
		return &exitError{code: exitFail, err: err}
	}
	return nil
}
