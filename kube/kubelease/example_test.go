package kubelease_test

import (
	"context"
	"fmt"
	"os"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/leasewrap/leasewrap/kube/kubelease"
	"github.com/leasewrap/leasewrap/lease"
	"github.com/leasewrap/leasewrap/supervisor"
)

// Example runs a command under the Lease jobs/nightly-report, as
// `leasewrap kube run nightly-report -n jobs -- ./report.sh` does.
func Example() {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rc, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, nil).ClientConfig()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return
	}
	cl, err := kubelease.NewClient(rc)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return
	}
	l, err := kubelease.New(kubelease.Config{
		Client:    cl,
		Namespace: "jobs",
		Name:      "nightly-report",
		Identity:  "report-7f9c_1a2b3c4d",
		Skew:      kubelease.DefaultSkew,
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return
	}
	var _ lease.Locker = l
	res, err := supervisor.Run(context.Background(), supervisor.Config{
		Locker:    l,
		Argv:      []string{"./report.sh"},
		KillGrace: kubelease.DefaultTTL / 3,
	})
	fmt.Println(res.Outcome, err)
}
