package main

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/leasewrap/leasewrap/etcd/internal/etcdtest"
)

func TestAuthPasswordNeverReachesChild(t *testing.T) {
	c := etcdtest.Start(t, etcdtest.Options{})
	cli := c.Client(t)
	ctx := context.Background()
	for _, step := range []func() error{
		func() error { _, err := cli.RoleAdd(ctx, "root"); return err },
		func() error { _, err := cli.UserAdd(ctx, "root", "s3cret-pw"); return err },
		func() error { _, err := cli.UserGrantRole(ctx, "root", "root"); return err },
		func() error { _, err := cli.AuthEnable(ctx); return err },
	} {
		if err := step(); err != nil {
			t.Fatalf("enable auth: %v", err)
		}
	}
	envFile := tmp(t, "env")
	code, out := runLW(t, []string{"ETCDCTL_PASSWORD=s3cret-pw"},
		lockArgs("auth", c.Endpoints(), []string{"--user", "root"}, "sh", "-c", "env > "+envFile)...)
	if code != 0 {
		t.Fatalf("with the password from the environment: want 0, have %d:\n%s", code, out)
	}
	if env := waitFile(t, envFile, time.Second); strings.Contains(env, "s3cret-pw") {
		t.Fatal("the password reached the child's environment")
	}
	pwFile := tmp(t, "pw")
	os.WriteFile(pwFile, []byte("s3cret-pw\n"), 0o600)
	if code, out := runLW(t, []string{"ETCDCTL_PASSWORD="}, lockArgs("auth", c.Endpoints(), []string{"--user", "root", "--password-file", pwFile}, "true")...); code != 0 {
		t.Fatalf("with --password-file: want 0, have %d:\n%s", code, out)
	}
	ran := tmp(t, "ran")
	if code, out := runLW(t, []string{"ETCDCTL_PASSWORD=wrong"}, lockArgs("auth", c.Endpoints(), []string{"--user", "root"}, "touch", ran)...); code != 77 {
		t.Fatalf("wrong password: want 77, have %d:\n%s", code, out)
	}
	if _, err := os.Stat(ran); err == nil {
		t.Fatal("the command ran with a refused password")
	}
}
