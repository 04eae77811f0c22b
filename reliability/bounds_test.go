package reliability

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The documented record bounds (docs/CLAIMS.md, RESERVATIONS.md,
// SESSIONS.md), spelled out here rather than imported: this battery checks
// the binary against its documentation.
const (
	claimBoundBytes    = 1 << 20
	claimBoundNesting  = 128
	reserveBoundBytes  = 1 << 20
	manifestBoundBytes = 16 << 20
	ownerBoundBytes    = 1 << 20
)

// boundCase is one oversized, wide or deep file planted where a kind
// reads, and what leasewrap must answer.
type boundCase struct {
	k      kind
	name   string
	plant  func(e *env) []string // writes the files, returns the paths that must stay untouched
	want   int                   // the run verb's exit code
	status string                // claims: the state `claim status` reports
}

// padTo pads text with filler to exactly n bytes.
func padTo(text, filler string, n int) string {
	return text + strings.Repeat(filler, n-len(text))
}

// base36Keys writes n short distinct keys k0, k1, … as format renders
// each.
func base36Keys(n int, format string) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, format, "k"+strconv.FormatInt(int64(i), 36))
	}
	return b.String()
}

func writeFiles(e *env, files map[string]string) []string {
	var paths []string
	for p, content := range files {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			e.t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			e.t.Fatal(err)
		}
		paths = append(paths, p)
	}
	return paths
}

func boundCases() []boundCase {
	// A TTL claim by another machine, unexpired: suspect, so protected
	// (75) when it reads, corrupted (65) when it is refused.
	suspect := func() string {
		return fmt.Sprintf("schema_version: 1\nkey: reliability-key\nholder: elsewhere\nacquired_at: %d\npid: 1\nhost: another-host\nmachine_id: another-machine\nexpires_at: %d\n",
			time.Now().UnixMilli(), time.Now().Add(time.Hour).UnixMilli())
	}
	claim := func(name string, want int, status string, body func() string) boundCase {
		return boundCase{kindClaimPID, "claim/" + name, func(e *env) []string {
			return writeFiles(e, map[string]string{claimPath(e.claimRoot(), "reliability-key"): body()})
		}, want, status}
	}
	deep := func(total int) func() string {
		return func() string {
			inner := total - 2 // below the root and metadata mappings
			return suspect() + "metadata:\n  a: " + strings.Repeat("{a: ", inner) + "1" + strings.Repeat("}", inner) + "\n"
		}
	}
	const runID = "01bounds0000000000000000000"
	record := func(extra string) string {
		return `{` + extra + `"schema_version":1,"run_id":"` + runID + `","creator":null,"stale_run_ids":[]}`
	}
	wideDeep := base36Keys(100_000, `"%s":0,`) + `"deep":` + strings.Repeat(`{"a":[`, 500) + "1" + strings.Repeat("]}", 500) + ","
	reservation := func(name string, want int, rec, manifest string) boundCase {
		return boundCase{kindReserve, "reservation/" + name, func(e *env) []string {
			files := map[string]string{reservationPath(e.reserveHome(), "reliability-key"): rec}
			if manifest != "" {
				files[manifestPath(e.reserveHome(), runID)] = manifest
			}
			return writeFiles(e, files)
		}, want, ""}
	}
	owner := func(extra string) string {
		// A schema-2 owner is live while its pid runs: this test process.
		return fmt.Sprintf(`{%s"schema_version":2,"session_id":%q,"lease_token":"0123456789abcdef0123456789abcdef","pid":%d,"storage_writer_epoch":6,"daemon_namespace":null,"build_fingerprint":null,"protocol_version":null,"endpoint":null,"executable_path":null,"daemon_instance_id":"another-daemon","acquired_at_ms":1,"last_seen_ms":1}`,
			extra, testSID, os.Getpid())
	}
	session := func(name string, want int, body string) boundCase {
		return boundCase{kindSession, "session/" + name, func(e *env) []string {
			return writeFiles(e, map[string]string{filepath.Join(ownerDir(e.sessionRoot(), testSID), "0123456789abcdef0123456789abcdef.json"): body})
		}, want, ""}
	}
	return []boundCase{
		claim("over-bound", 65, "corrupted", func() string { return padTo(suspect()+"#", "x", claimBoundBytes) + "\n" }),
		claim("at-bound", 75, "suspect", func() string { return padTo(suspect()+"#", "x", claimBoundBytes-1) + "\n" }),
		claim("100k-keys", 75, "suspect", func() string { return suspect() + "metadata:\n" + base36Keys(100_000, " %s: 1\n") }),
		claim("nested-128", 75, "suspect", deep(claimBoundNesting)),
		claim("nested-129", 65, "corrupted", deep(claimBoundNesting+1)),
		claim("nested-10000", 65, "corrupted", deep(10_000)),
		claim("alias-bomb", 65, "corrupted", func() string {
			// Ten levels of ten aliases each: 10^10 nodes once expanded.
			s := suspect() + "metadata:\n  a0: &a0 [1,1,1,1,1,1,1,1,1,1]\n"
			for i := 1; i < 10; i++ {
				ref := fmt.Sprintf("*a%d", i-1)
				s += fmt.Sprintf("  a%d: &a%d [%s]\n", i, i, strings.Repeat(ref+",", 9)+ref)
			}
			return s
		}),
		reservation("over-bound", 65, padTo(record(""), " ", reserveBoundBytes+1), ""),
		reservation("100k-keys-nested-1000", 7, record(wideDeep), `{`+wideDeep+`"exit_code":7}`),
		reservation("manifest-over-bound", 65, record(""), padTo(`{"exit_code":7}`, " ", manifestBoundBytes+1)),
		session("over-bound", 65, padTo(owner(""), " ", ownerBoundBytes+1)),
		session("100k-keys-nested-1000", 75, owner(wideDeep)),
	}
}

// TestRecordBounds plants, for each kind, a record over its documented
// byte bound, one with 100 000 keys, and deeply nested ones, and runs the
// kind's run verb (and, for claims, `claim status`). Each is answered
// within the battery's usual minute: refused (65) or read as what it says
// (held: 75; a published run: its exit code), never running the command,
// and every planted file is left as it was.
func TestRecordBounds(t *testing.T) {
	for _, c := range boundCases() {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			paths := c.plant(e)
			before := map[string]string{}
			for _, p := range paths {
				before[p] = snapshot(p)
			}
			r := e.run(c.k, "bounded", 10*time.Millisecond, 0, "")
			ran := readWitness(t, e.witness)["bounded"] != nil
			t.Logf("RESULT %s | exit %d | ran %v | %s", c.name, r.code, ran, firstLine(r.err))
			if r.code != c.want || ran {
				t.Errorf("want exit %d without running the command, have ran=%v %v", c.want, ran, r)
			}
			if c.want == 65 && !strings.Contains(r.err, "larger than") && !strings.Contains(r.err, "nest") && !strings.Contains(r.err, "alias") {
				t.Errorf("the refusal does not say what bound was passed: %s", firstLine(r.err))
			}
			if c.status != "" {
				st := e.lw(nil, "claim", "status", "reliability-key", "--root", e.claimRoot())
				var out struct{ State string }
				if err := json.Unmarshal([]byte(st.out), &out); err != nil || st.code != 0 || out.State != c.status {
					t.Errorf("claim status: want state %s, exit 0; have %v (%v)", c.status, st, err)
				}
			}
			for _, p := range paths {
				if after := snapshot(p); after != before[p] {
					t.Errorf("%s changed: %s -> %s", p, before[p], after)
				}
			}
		})
	}
	noOrphans(t)
}

// TestMetadataWriteBound: `claim run --metadata` that the readers would
// refuse (nested past the bound, the reported 10 000 levels in a 60 kB
// argument, or 100 kB of JSON whose YAML is 10 MB) is usage (64) for the
// run verb and 2 for `claim acquire` (its documented usage code); nothing
// is written and the command does not run.
func TestMetadataWriteBound(t *testing.T) {
	deep := func(levels int) string { return strings.Repeat(`{"a":`, levels) + "1" + strings.Repeat("}", levels) }
	wide := strings.Repeat(`{"k":`, 100) + "[" + strings.Repeat("1,", 50_000) + "1]" + strings.Repeat("}", 100)
	for _, c := range []struct {
		name, metadata string
		ok             bool
	}{
		{"nested-127", deep(claimBoundNesting - 1), true},
		{"nested-128", deep(claimBoundNesting), false},
		{"nested-10000", deep(10_000), false},
		{"10MB-as-yaml", wide, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			r := e.lw(e.childEnv("meta", 0, 0), append([]string{"claim", "run", "reliability-key", "--root", e.claimRoot(), "--metadata", c.metadata, "--"}, e.childArgv()...)...)
			ran := readWitness(t, e.witness)["meta"] != nil
			t.Logf("RESULT claim run --metadata %s | exit %d | ran %v | %s", c.name, r.code, ran, firstLine(r.err))
			if c.ok && (r.code != 0 || !ran) {
				t.Fatalf("want the command run, exit 0; have ran=%v %v", ran, r)
			}
			if c.ok {
				return
			}
			if r.code != 64 || ran {
				t.Errorf("want usage (64) without running the command, have ran=%v %v", ran, r)
			}
			a := e.lw(nil, "claim", "acquire", "reliability-key", "--holder", "h", "--root", e.claimRoot(), "--metadata", c.metadata)
			t.Logf("RESULT claim acquire --metadata %s | exit %d | %s", c.name, a.code, firstLine(a.err))
			if a.code != 2 {
				t.Errorf("claim acquire: want 2, have %v", a)
			}
			if _, err := os.Stat(filepath.Join(e.claimRoot(), ".fno")); !os.IsNotExist(err) {
				t.Errorf("something was written under the claims root (%v)", err)
			}
		})
	}
}
