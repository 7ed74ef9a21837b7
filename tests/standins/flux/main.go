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
	"errors"
	"log/slog"
	"os"

	// Import to initialize client auth plugins.
	_ "k8s.io/client-go/plugin/pkg/client/auth"

	helmcmd "helm.sh/helm/v4/pkg/cmd"
	"helm.sh/helm/v4/pkg/kube"
)

func main() {
	kube.ManagedFieldsManager = "helm-controller"

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
