package kongdoc

import (
	"strings"
	"testing"
)

func TestGraftRefusesDisagreeingVerbs(t *testing.T) {
	stub := &Node{Name: "leasewrap", Commands: []*Node{{Name: "kube", Group: "g", Commands: []*Node{{Name: "run"}, {Name: "holder"}}}}}
	real := &Node{Name: "leasewrap-kube", Commands: []*Node{{Name: "kube", Help: "real", Commands: []*Node{{Name: "run", Flags: []Flag{{Name: "namespace"}}}, {Name: "holder"}}}}}
	if err := stub.Graft(real, nil); err != nil {
		t.Fatal(err)
	}
	k := stub.Command("kube")
	if k.Help != "real" || k.Group != "g" || len(k.Command("run").Flags) != 1 {
		t.Errorf("want the sibling's kind in the stub's group, have %+v", k)
	}
	real.Commands[0].Commands = append(real.Commands[0].Commands, &Node{Name: "new"})
	stub = &Node{Commands: []*Node{{Name: "kube", Commands: []*Node{{Name: "run"}, {Name: "holder"}}}}}
	if err := stub.Graft(real, nil); err == nil || !strings.Contains(err.Error(), "new") {
		t.Errorf("want an error naming the verb the stub lacks, have %v", err)
	}
}

func TestRoff(t *testing.T) {
	for in, want := range map[string]string{
		"--wait":      `\-\-wait`,
		`a\b`:         `a\eb`,
		".starts":     `\&.starts`,
		"'quote":      `\&'quote`,
		"plain text.": "plain text.",
	} {
		if have := roff(in); have != want {
			t.Errorf("roff(%q): want %q, have %q", in, want, have)
		}
	}
}

func TestStripAndGraftPutTheSharedFlagsBack(t *testing.T) {
	shared := []Flag{{Name: "wait", Placeholder: "WAIT"}, {Name: "kill-grace", Placeholder: "KILL-GRACE"}}
	sib := &Node{Name: "leasewrap-kube", Flags: []Flag{{Name: "quiet"}}, Commands: []*Node{{Name: "kube", Commands: []*Node{
		{Name: "run", Flags: []Flag{{Name: "namespace", Placeholder: "NS"}, {Name: "wait", Placeholder: "WAIT"}, {Name: "kill-grace", Placeholder: "KILL-GRACE"}}},
		{Name: "holder", Flags: []Flag{{Name: "namespace", Placeholder: "NS"}}},
	}}}}
	sib.Strip(shared)
	run, holder := sib.Commands[0].Commands[0], sib.Commands[0].Commands[1]
	if sib.Flags != nil || !run.Shared || len(run.Flags) != 1 || holder.Shared || len(holder.Flags) != 1 {
		t.Fatalf("want the program's flags and run's shared flags left out, have %+v %+v %+v", sib.Flags, run, holder)
	}
	lw := &Node{Name: "leasewrap", Commands: []*Node{{Name: "kube", Commands: []*Node{{Name: "run"}, {Name: "holder"}}}}}
	if err := lw.Graft(sib, shared); err != nil {
		t.Fatal(err)
	}
	if have := lw.Command("kube").Command("run").Flags; len(have) != 3 || have[1].Name != "wait" {
		t.Errorf("want run's own flag and the shared ones, have %+v", have)
	}
	if len(lw.Command("kube").Command("holder").Flags) != 1 {
		t.Errorf("want holder without the shared flags")
	}
}
