// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDistributionAuthenticators runs the built distribution with the authenticators it
// bundles (contrib's basicauth and bearertokenauth, builder-config.yaml) in front of the
// query API, the recorded-session endpoint and the channel's admin endpoint, as the
// exporter's and receiver's READMEs configure them: each answers 401 without credentials
// and serves with them. Without a bundled authenticator those endpoints could not be
// exposed beyond loopback (DESIGN §7, §12).
func TestDistributionAuthenticators(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: runs the built collector")
	}
	bin := collectorBinary(t)
	dir := t.TempDir()
	ingest, api, admin, prom, health := freePort(t), freePort(t), freePort(t), freePort(t), freePort(t)
	cfg := fmt.Sprintf(`
extensions:
  health_check: {endpoint: %q}
  basicauth/api:
    htpasswd: {inline: "grafana:s3cret"}
  basicauth/admin:
    htpasswd: {inline: "admin:adm1n"}
  bearertokenauth/ingest:
    token: ingest-token
receivers:
  agentsession:
    endpoint: %q
    auth: {authenticator: bearertokenauth/ingest}
  agentsession/channel:
    endpoint: %q
    channel:
      evaluation_files: [%q]
      store: {driver: sqlite, dsn: %q}
      admin:
        endpoint: %q
        auth: {authenticator: basicauth/admin}
processors:
  agentsession:
    turn_settle: 100ms
    session_timeout: 1s
exporters:
  agenteval:
    store: {driver: sqlite, dsn: %q}
    prometheus: {endpoint: %q}
    api:
      endpoint: %q
      auth: {authenticator: basicauth/api}
service:
  telemetry:
    metrics: {level: none}
    logs: {level: warn}
  extensions: [health_check, basicauth/api, basicauth/admin, bearertokenauth/ingest]
  pipelines:
    traces:
      receivers: [agentsession, agentsession/channel]
      processors: [agentsession]
      exporters: [agenteval]
`, health, ingest, freePort(t), mustAbs(t, "../testdata/evaluations/SIP-5.md"), filepath.Join(dir, "channel.db"),
		admin, filepath.Join(dir, "agenteval.db"), prom, api)
	cfgPath := filepath.Join(dir, "config.yaml")
	require.NoError(t, os.WriteFile(cfgPath, []byte(cfg), 0o600))
	cmd := startProcess(t, bin, cfgPath, api)
	defer func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	}()
	waitListening(t, ingest)
	waitListening(t, admin)

	do := func(method, url, body string, auth func(*http.Request)) (int, string) {
		req, err := http.NewRequest(method, url, strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		if auth != nil {
			auth(req)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp.StatusCode, string(b)
	}
	bearer := func(tok string) func(*http.Request) {
		return func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+tok) }
	}
	basic := func(user, pass string) func(*http.Request) {
		return func(r *http.Request) { r.SetBasicAuth(user, pass) }
	}
	session, err := os.ReadFile("../internal/sessionjson/testdata/multi_agent_session.json")
	require.NoError(t, err)

	code, _ := do(http.MethodPost, "http://"+ingest+"/v1/agent_sessions", string(session), nil)
	assert.Equal(t, http.StatusUnauthorized, code, "recorded sessions without the token")
	code, _ = do(http.MethodPost, "http://"+ingest+"/v1/agent_sessions", string(session), bearer("wrong"))
	assert.Equal(t, http.StatusUnauthorized, code, "recorded sessions with a wrong token")
	code, body := do(http.MethodPost, "http://"+ingest+"/v1/agent_sessions", string(session), bearer("ingest-token"))
	require.Equal(t, http.StatusAccepted, code, body)

	code, _ = do(http.MethodGet, "http://"+api+"/api/v1/agent_sessions", "", nil)
	assert.Equal(t, http.StatusUnauthorized, code, "the query API without credentials")
	code, _ = do(http.MethodGet, "http://"+api+"/api/v1/agent_sessions", "", basic("grafana", "wrong"))
	assert.Equal(t, http.StatusUnauthorized, code, "the query API with a wrong password")
	assert.Eventually(t, func() bool {
		code, body := do(http.MethodGet, "http://"+api+"/api/v1/agent_sessions", "", basic("grafana", "s3cret"))
		return code == http.StatusOK && strings.Contains(body, `"session_id"`)
	}, 30*time.Second, 100*time.Millisecond, "the query API serves the stored session with credentials")

	agent := `{"agent_id":"proctor-1","name":"Proctor"}`
	code, _ = do(http.MethodPost, "http://"+admin+"/api/v1/admin/agents", agent, nil)
	assert.Equal(t, http.StatusUnauthorized, code, "the channel's admin endpoint without credentials")
	code, body = do(http.MethodPost, "http://"+admin+"/api/v1/admin/agents", agent, basic("admin", "adm1n"))
	assert.Equal(t, http.StatusCreated, code, body)
	assert.Contains(t, body, `"api_key"`)
}

func mustAbs(t *testing.T, p string) string {
	t.Helper()
	abs, err := filepath.Abs(p)
	require.NoError(t, err)
	return abs
}
