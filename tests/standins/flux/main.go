// A stand-in for Flux's helm-controller writing to a cluster: Helm 4's own command tree
// (helm.sh/helm/v4/pkg/cmd) with the field manager helm-controller sets,
// kube.ManagedFieldsManager = "helm-controller". The tests install with --server-side=true, as
// helm-controller does where the HelmRelease asks for server-side apply, and upgrade without
// --force-conflicts, as helm-controller does.
//
//	helm-controller [helm 4 arguments]
//
// scripts/tools.sh builds it from this file and helm.sh/helm/v4 (HELM4_VERSION).
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"slices"

	// Import to initialize client auth plugins.
	_ "k8s.io/client-go/plugin/pkg/client/auth"

	"helm.sh/helm/v4/pkg/action"
	"helm.sh/helm/v4/pkg/chart/common"
	"helm.sh/helm/v4/pkg/chart/loader"
	"helm.sh/helm/v4/pkg/cli"
	helmcmd "helm.sh/helm/v4/pkg/cmd"
	"helm.sh/helm/v4/pkg/postrenderer"
	"helm.sh/helm/v4/pkg/kube"
	"sigs.k8s.io/kustomize/kyaml/kio"
	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"
)

// originLabels is helm-controller's post-renderer (internal/postrender): every rendered object
// gets the labels naming the HelmRelease that installs it.
type originLabels struct{ name, namespace string }

func (o originLabels) Run(rendered *bytes.Buffer) (*bytes.Buffer, error) {
	nodes, err := kio.ParseAll(rendered.String())
	if err != nil {
		return nil, err
	}
	for _, n := range nodes {
		for k, v := range map[string]string{
			"helm.toolkit.fluxcd.io/name":      o.name,
			"helm.toolkit.fluxcd.io/namespace": o.namespace,
		} {
			if err := n.PipeE(kyaml.SetLabel(k, v)); err != nil {
				return nil, err
			}
		}
	}
	out, err := kio.StringAll(nodes)
	if err != nil {
		return nil, err
	}
	return bytes.NewBufferString(out), nil
}

// apart installs or upgrades a release whose record is stored in another namespace.
func apart(args []string) error {
	fs := flag.NewFlagSet("apart", flag.ContinueOnError)
	storage := fs.String("storage-namespace", "", "where the record is stored")
	target := fs.String("namespace", "", "where the release installs")
	fs.StringVar(target, "n", "", "where the release installs")
	valuesFile := fs.String("f", "", "a values file")
	origin := fs.String("origin", "", "the HelmRelease (of the storage namespace) whose origin labels every object gets, as helm-controller sets them")
	if err := fs.Parse(args); err != nil {
		return err
	}
	rest := fs.Args()
	if len(rest) < 3 || *storage == "" || *target == "" {
		return fmt.Errorf("usage: --storage-namespace S --namespace T [--origin HELMRELEASE] install|upgrade NAME CHART [-f VALUES]")
	}
	if len(rest) > 3 {
		if err := fs.Parse(rest[3:]); err != nil {
			return err
		}
	}
	verb, name, chartPath := rest[0], rest[1], rest[2]
	settings := cli.New()
	cfg := action.NewConfiguration()
	if err := cfg.Init(settings.RESTClientGetter(), *storage, "secret"); err != nil {
		return err
	}
	if kc, ok := cfg.KubeClient.(*kube.Client); ok {
		kc.Namespace = *target
	}
	ch, err := loader.Load(chartPath)
	if err != nil {
		return err
	}
	vals := map[string]any{}
	if *valuesFile != "" {
		read, err := common.ReadValuesFile(*valuesFile)
		if err != nil {
			return err
		}
		vals = read
	}
	var labels postrenderer.PostRenderer
	if *origin != "" {
		labels = originLabels{name: *origin, namespace: *storage}
	}
	ctx := context.Background()
	switch verb {
	case "install":
		i := action.NewInstall(cfg)
		i.Namespace, i.ReleaseName = *target, name
		i.ServerSideApply, i.ForceConflicts, i.TakeOwnership = true, true, true
		i.WaitStrategy = kube.HookOnlyStrategy
		i.PostRenderer = labels
		_, err = i.RunWithContext(ctx, ch, vals)
	case "upgrade":
		u := action.NewUpgrade(cfg)
		u.Namespace = *target
		u.ServerSideApply, u.ForceConflicts, u.TakeOwnership = "true", true, true
		u.WaitStrategy = kube.HookOnlyStrategy
		u.PostRenderer = labels
		_, err = u.RunWithContext(ctx, name, ch, vals)
	default:
		err = fmt.Errorf("install or upgrade, not %q", verb)
	}
	return err
}

func main() {
	kube.ManagedFieldsManager = "helm-controller"
	if slices.Contains(os.Args, "--storage-namespace") {
		if err := apart(os.Args[1:]); err != nil {
			fmt.Fprintln(os.Stderr, "Error:", err)
			os.Exit(1)
		}
		return
	}

	cmd, err := helmcmd.NewRootCmd(os.Stdout, os.Args[1:], helmcmd.SetupLogging)
	if err != nil {
		slog.Warn("command failed", slog.Any("error", err))
		os.Exit(1)
	}
	if err := cmd.Execute(); err != nil {
		if cerr, ok := errors.AsType[helmcmd.CommandError](err); ok {
			os.Exit(cerr.ExitCode)
		}
		os.Exit(1)
	}
}
