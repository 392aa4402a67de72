// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

// Package storagetest starts contrib's file_storage extension for tests: the storage
// extension config.yaml gives the agenteval exporter's persistent queue and the
// agentsession processor's continuation.storage.
package storagetest // import "github.com/agenteval/agenteval-collector/internal/storagetest"

import (
	"context"
	"testing"

	"github.com/open-telemetry/opentelemetry-collector-contrib/extension/storage/filestorage"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/extension/extensiontest"
)

// FileStorageID is config.yaml's file_storage/agenteval.
var FileStorageID = component.MustNewIDWithName("file_storage", "agenteval")

// StartFileStorage starts contrib's file_storage extension on dir (a process's
// extension: start another on the same dir for a restart). It is shut down at cleanup
// or by the returned func (the process stops), whichever comes first.
func StartFileStorage(t testing.TB, dir string) (component.Component, func()) {
	t.Helper()
	f := filestorage.NewFactory()
	fcfg := f.CreateDefaultConfig().(*filestorage.Config)
	fcfg.Directory = dir
	fcfg.Compaction.Directory = dir
	ext, err := f.Create(context.Background(), extensiontest.NewNopSettings(f.Type()), fcfg)
	require.NoError(t, err)
	require.NoError(t, ext.Start(context.Background(), componenttest.NewNopHost()))
	var done bool
	stop := func() {
		if !done {
			done = true
			require.NoError(t, ext.Shutdown(context.Background()))
		}
	}
	t.Cleanup(stop)
	return ext, stop
}
