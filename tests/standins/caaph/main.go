// A stand-in for Cluster API's Helm add-on provider (CAAPH) writing to a workload cluster: the
// Helm 3 SDK's action.NewInstall and action.NewUpgrade, as CAAPH's internal/helm_client.go calls
// them, with the secret storage driver and client-side apply. Like CAAPH it does not set
// kube.ManagedFieldsManager, so the SDK names its field manager after the binary: built as
// `manager` (CAAPH's image runs /manager), every field it writes is owned by `manager`.
//
//	manager [-n NAMESPACE] install|upgrade RELEASE CHART_DIR [--set K=V]... [-f VALUES.yaml]...
//
// scripts/tools.sh builds it from this file and helm.sh/helm/v3 (HELM3_VERSION); the tests of
// releases installed by controllers run it.
package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/cli"
	"helm.sh/helm/v3/pkg/strvals"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintf(os.Stderr, "Error: %v\n", err)
		os.Exit(1)
	}
}

type request struct {
	namespace, verb, release, chart string
	sets, files                     []string
}

func parse(args []string) (request, error) {
	var r request
	var positional []string
	for i := 0; i < len(args); i++ {
		value := func() (string, error) {
			if i+1 >= len(args) {
				return "", fmt.Errorf("%s needs a value", args[i])
			}
			i++
			return args[i], nil
		}
		var err error
		switch args[i] {
		case "-n", "--namespace":
			r.namespace, err = value()
		case "--set":
			var s string
			s, err = value()
			r.sets = append(r.sets, s)
		case "-f", "--values":
			var f string
			f, err = value()
			r.files = append(r.files, f)
		default:
			positional = append(positional, args[i])
		}
		if err != nil {
			return r, err
		}
	}
	if len(positional) != 3 || (positional[0] != "install" && positional[0] != "upgrade") {
		return r, fmt.Errorf("usage: manager [-n NAMESPACE] install|upgrade RELEASE CHART_DIR [--set K=V]... [-f FILE]...")
	}
	r.verb, r.release, r.chart = positional[0], positional[1], positional[2]
	return r, nil
}

func run(args []string) error {
	r, err := parse(args)
	if err != nil {
		return err
	}
	settings := cli.New()
	if r.namespace != "" {
		settings.SetNamespace(r.namespace)
	}
	vals := map[string]interface{}{}
	for _, f := range r.files {
		v, err := chartutil.ReadValuesFile(f)
		if err != nil {
			return err
		}
		vals = chartutil.CoalesceTables(v.AsMap(), vals)
	}
	for _, s := range r.sets {
		if err := strvals.ParseInto(s, vals); err != nil {
			return err
		}
	}
	chrt, err := loader.Load(r.chart)
	if err != nil {
		return err
	}
	cfg := new(action.Configuration)
	logf := func(string, ...interface{}) {}
	if err := cfg.Init(settings.RESTClientGetter(), settings.Namespace(), "secret", logf); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if r.verb == "install" {
		install := action.NewInstall(cfg)
		install.Namespace = settings.Namespace()
		install.ReleaseName = r.release
		install.CreateNamespace = true
		install.Timeout = time.Minute
		rel, err := install.RunWithContext(ctx, chrt, vals)
		if err != nil {
			return err
		}
		fmt.Printf("installed %s revision %d\n", rel.Name, rel.Version)
		return nil
	}
	upgrade := action.NewUpgrade(cfg)
	upgrade.Namespace = settings.Namespace()
	upgrade.Timeout = time.Minute
	rel, err := upgrade.RunWithContext(ctx, r.release, chrt, vals)
	if err != nil {
		return err
	}
	fmt.Printf("upgraded %s to revision %d\n", rel.Name, rel.Version)
	return nil
}
