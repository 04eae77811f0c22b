// Package prometheus_test checks the Prometheus rules and the Grafana
// dashboard shipped in examples/prometheus: promtool accepts the rules and
// their unit tests pass, every leasewrap_ series they and the dashboard
// name is one leasewrap writes, every dashboard query is PromQL, and
// docs/METRICS.md shows the rules as they are.
package prometheus_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/leasewrap/leasewrap/internal/metrics"
	"github.com/leasewrap/leasewrap/internal/testutil"
)

const rules, tests = "leasewrap.rules.yml", "leasewrap.rules.test.yml"

func promtool(t *testing.T, args ...string) {
	t.Helper()
	path, err := exec.LookPath("promtool")
	testutil.Need(t, "promtool (Debian: apt-get install prometheus)", err)
	out, err := exec.Command(path, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

func TestRulesCheck(t *testing.T) { promtool(t, "check", "rules", rules) }

func TestRulesUnitTests(t *testing.T) { promtool(t, "test", "rules", tests) }

// writes is every metric family leasewrap writes: its textfile's and its
// --listen endpoint's, taken from their own output.
func writes(t *testing.T) map[string]bool {
	t.Helper()
	var b bytes.Buffer
	tf, err := metrics.Textfile(nil, metrics.Run{Name: "x", Kind: "claim", Outcome: metrics.OutcomeSuccess, Start: time.Now(), End: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	b.Write(tf)
	ttl, none := metrics.NewLive("claim", "k"), metrics.NewLive("flock", "/l")
	ttl.Acquired(time.Now().Add(time.Minute))
	ttl.Started(1, time.Now())
	none.Acquired(time.Time{})
	metrics.Write(&b, ttl.Families(time.Now()))
	metrics.Write(&b, none.Families(time.Now()))
	written := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^# TYPE (\S+) `).FindAllStringSubmatch(b.String(), -1) {
		written[m[1]] = true
	}
	return written
}

// TestRulesNameOnlyWhatLeasewrapWrites: a rule on a series leasewrap does
// not write would never fire.
func TestRulesNameOnlyWhatLeasewrapWrites(t *testing.T) {
	written := writes(t)
	for _, f := range []string{rules, tests} {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range regexp.MustCompile(`\bleasewrap_[a-z_]+`).FindAllString(string(src), -1) {
			if !written[name] {
				t.Errorf("%s names %s, which leasewrap does not write", f, name)
			}
		}
	}
}

// TestDocsShowTheseRules: docs/METRICS.md holds the rules file verbatim.
func TestDocsShowTheseRules(t *testing.T) {
	src, err := os.ReadFile(rules)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile("../../docs/METRICS.md")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(doc, []byte("```yaml\n"+string(src)+"```\n")) {
		t.Fatalf("docs/METRICS.md does not show %s as it is (in a ```yaml block)", rules)
	}
}

// TestDashboard checks leasewrap.dashboard.json structurally (what Grafana
// needs to import it: a title, a uid, panels with unique ids and a place
// on the grid, Prometheus targets), and its queries: each is PromQL that
// promtool accepts, on series leasewrap writes.
func TestDashboard(t *testing.T) {
	b, err := os.ReadFile("leasewrap.dashboard.json")
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Title, UID    string
		SchemaVersion int `json:"schemaVersion"`
		Panels        []struct {
			ID      int
			Type    string
			Title   string
			GridPos *struct{ X, Y, W, H int } `json:"gridPos"`
			Targets []struct {
				RefID      string `json:"refId"`
				Expr       string
				Datasource struct{ Type string }
			}
		}
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	if d.Title == "" || d.UID == "" || d.SchemaVersion == 0 || len(d.Panels) == 0 {
		t.Fatalf("want a title, a uid, a schemaVersion and panels, have %q %q %d, %d panels", d.Title, d.UID, d.SchemaVersion, len(d.Panels))
	}
	ids, written := map[int]bool{}, writes(t)
	var rules strings.Builder
	rules.WriteString("groups:\n- name: dashboard\n  rules:\n")
	for _, p := range d.Panels {
		if ids[p.ID] || p.Title == "" || p.Type == "" || p.GridPos == nil || p.GridPos.W <= 0 || p.GridPos.H <= 0 || p.GridPos.X+p.GridPos.W > 24 || len(p.Targets) == 0 {
			t.Errorf("panel %d %q: want a unique id, a title, a type, a place within 24 columns and targets", p.ID, p.Title)
		}
		ids[p.ID] = true
		for _, tg := range p.Targets {
			if tg.RefID == "" || tg.Datasource.Type != "prometheus" || tg.Expr == "" {
				t.Errorf("panel %q: a target without refId, Prometheus datasource or expr", p.Title)
			}
			q, _ := json.Marshal(tg.Expr) // a JSON string is a YAML string
			fmt.Fprintf(&rules, "  - record: dashboard:panel%d:%s\n    expr: %s\n", p.ID, tg.RefID, q)
			for _, name := range regexp.MustCompile(`\bleasewrap_[a-z_]+`).FindAllString(tg.Expr, -1) {
				if !written[strings.TrimSuffix(name, "_bucket")] {
					t.Errorf("panel %q queries %s, which leasewrap does not write", p.Title, name)
				}
			}
		}
	}
	f := filepath.Join(t.TempDir(), "dashboard.rules.yml")
	if err := os.WriteFile(f, []byte(rules.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	promtool(t, "check", "rules", f) // every query parses as PromQL
}
