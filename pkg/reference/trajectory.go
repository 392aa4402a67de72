// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package reference // import "github.com/agenteval/agenteval-collector/pkg/reference"

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"
)

// TrajectoryMode says how an output trajectory must match the reference.
type TrajectoryMode string

// Trajectory modes: agentevals' four (create_trajectory_match_evaluator) and ADK's two
// partial-order modes (trajectory_evaluator.py). Mode and argument-mode names are
// case-insensitive, so ADK's IN_ORDER and ANY_ORDER are accepted as written, and ADK's EXACT
// is TrajectoryStrict.
const (
	// TrajectoryStrict: same messages in the same order with the same roles; within one
	// message the same tool calls in any order. A flat list of tool calls is one message
	// per call, so strict is positional there (ADK's EXACT).
	TrajectoryStrict TrajectoryMode = "strict"
	// TrajectoryUnordered: the same tool calls, matched one-to-one, in any order.
	TrajectoryUnordered TrajectoryMode = "unordered"
	// TrajectorySubset: every output call matches a distinct reference call (no extras).
	TrajectorySubset TrajectoryMode = "subset"
	// TrajectorySuperset: every reference call matches a distinct output call (extras
	// allowed).
	TrajectorySuperset TrajectoryMode = "superset"
	// TrajectoryInOrder (ADK IN_ORDER): the reference calls appear in the output in order;
	// extras allowed in between.
	TrajectoryInOrder TrajectoryMode = "in_order"
	// TrajectoryAnyOrder (ADK ANY_ORDER): the reference calls appear in the output, one-to-one,
	// in any order; extras allowed. The same test as TrajectorySuperset.
	TrajectoryAnyOrder TrajectoryMode = "any_order"
)

// ArgsMode says how the arguments of two calls of the same tool are compared (agentevals'
// tool_args_match_mode). Values are compared after JSON normalisation (numbers as float64).
type ArgsMode string

// Argument modes.
const (
	ArgsExact    ArgsMode = "exact"    // equal objects
	ArgsIgnore   ArgsMode = "ignore"   // names only
	ArgsSubset   ArgsMode = "subset"   // every output argument is in the reference with the same value
	ArgsSuperset ArgsMode = "superset" // every reference argument is in the output with the same value
)

// ArgsMatcher overrides the argument comparison for one tool: Func when set, else Keys (the
// values at these dotted paths, e.g. "time.start", must be equal), else Mode.
type ArgsMatcher struct {
	Mode ArgsMode
	Keys []string
	Func func(output, reference map[string]any) bool
}

// TrajectoryOptions configures NewTrajectoryMatchEvaluator. The zero value is agentevals'
// default: strict, exact arguments, boolean score.
type TrajectoryOptions struct {
	Mode          TrajectoryMode
	ArgsMode      ArgsMode
	ArgsOverrides map[string]ArgsMatcher
	// PartialCredit scores the fraction matched instead of 0/1 (pass is unchanged): strict =
	// positional matches / len(reference) (strands exact_match_scorer), in_order = reference
	// calls found in order / len(reference) (strands in_order_match_scorer), superset and
	// any_order = matched / len(reference), subset = matched / len(output), unordered =
	// matched / max(len(reference), len(output)).
	PartialCredit bool
}

// canonical returns o with its mode names as the constants spell them: trimmed and
// lower-cased (ADK writes IN_ORDER, ANY_ORDER, EXACT), and ADK's EXACT as TrajectoryStrict.
func (o TrajectoryOptions) canonical() TrajectoryOptions {
	o.Mode = TrajectoryMode(strings.ToLower(strings.TrimSpace(string(o.Mode))))
	if o.Mode == "exact" {
		o.Mode = TrajectoryStrict
	}
	o.ArgsMode = canonicalArgsMode(o.ArgsMode)
	if len(o.ArgsOverrides) > 0 {
		ov := make(map[string]ArgsMatcher, len(o.ArgsOverrides))
		for tool, m := range o.ArgsOverrides {
			m.Mode = canonicalArgsMode(m.Mode)
			ov[tool] = m
		}
		o.ArgsOverrides = ov
	}
	return o
}

func canonicalArgsMode(m ArgsMode) ArgsMode {
	return ArgsMode(strings.ToLower(strings.TrimSpace(string(m))))
}

// Validate reports an unknown mode or argument mode, naming the field. Names are
// case-insensitive, and ADK's EXACT is strict.
func (o TrajectoryOptions) Validate() error {
	o = o.canonical()
	switch o.Mode {
	case "", TrajectoryStrict, TrajectoryUnordered, TrajectorySubset, TrajectorySuperset, TrajectoryInOrder, TrajectoryAnyOrder:
	default:
		return fmt.Errorf("mode: %w: %q: want strict (or exact), unordered, subset, superset, in_order or any_order", ErrInvalidOption, o.Mode)
	}
	if err := validArgsMode(o.ArgsMode); err != nil {
		return fmt.Errorf("args_mode: %w", err)
	}
	for tool, m := range o.ArgsOverrides {
		if err := validArgsMode(m.Mode); err != nil {
			return fmt.Errorf("args_overrides[%s]: %w", tool, err)
		}
	}
	return nil
}

func validArgsMode(m ArgsMode) error {
	switch m {
	case "", ArgsExact, ArgsIgnore, ArgsSubset, ArgsSuperset:
		return nil
	}
	return fmt.Errorf("%w: %q: want exact, ignore, subset or superset", ErrInvalidOption, m)
}

type trajectoryEval struct {
	name string
	opts TrajectoryOptions
	err  error
}

// NewTrajectoryMatchEvaluator returns a trajectory matcher in agentevals' and ADK's modes
// (name "" = "trajectory_match"). Invalid options make every Evaluate return the
// Validate error.
//
// Reference: Metadata["expected_trajectory"], else Reference. A Reference that is a bare
// string is another evaluator's (a class label, a single tool for tool selection): Evaluate
// returns ErrNoReference; a string in Metadata["expected_trajectory"] is a one-call
// trajectory. Both the reference and the output are
// read as OpenAI / agentevals messages (`role`, `tool_calls[].function.{name, arguments}`),
// `{"messages": [...]}`, a flat list of tool calls (names, or objects with `name` /
// `tool_name` / `tool` and `args` / `arguments` / `parameters` / `input`), or one such
// tool-call object, arguments included; an object carrying several lists is
// read through `trajectory`, then `messages`, `tool_calls`, `tool_sequence`, `sequence`,
// `tool`, `tools`, `selected_tools`. Calls are matched one-to-one by a
// maximum bipartite matching, so repeated calls are never counted twice and the verdict
// does not depend on list order.
//
// Score: 1 (pass) or 0 (fail), or the matched fraction with PartialCredit. Both empty:
// score 1, pass. Details: mode, args_mode, expected_calls, actual_calls, matched,
// unmatched_expected, unmatched_actual.
func NewTrajectoryMatchEvaluator(name string, opts TrajectoryOptions) Evaluator {
	opts = opts.canonical()
	if opts.Mode == "" {
		opts.Mode = TrajectoryStrict
	}
	if opts.ArgsMode == "" {
		opts.ArgsMode = ArgsExact
	}
	return trajectoryEval{name: cmp.Or(name, DefaultTrajectoryName), opts: opts, err: opts.Validate()}
}

func (e trajectoryEval) Name() string { return e.name }

func (e trajectoryEval) Evaluate(_ context.Context, ex Example, output any) (Result, error) {
	if e.err != nil {
		return Result{}, fmt.Errorf("%s: %w", e.name, e.err)
	}
	ref, src, err := toolReference(e.name, ex, stringNever, MetaExpectedTrajectory)
	if err != nil {
		return Result{}, err
	}
	want, err := trajectory(ref, trajectoryKeys)
	if err != nil {
		return Result{}, fmt.Errorf("%s: %s: %w", e.name, src, err)
	}
	got, err := trajectory(output, trajectoryKeys)
	if err != nil {
		return Result{}, fmt.Errorf("%s: output: %w", e.name, err)
	}
	return e.match(want, got), nil
}

func flatten(msgs []message) []ToolCall {
	var out []ToolCall
	for _, m := range msgs {
		out = append(out, m.Calls...)
	}
	return out
}

func (e trajectoryEval) match(wantMsgs, gotMsgs []message) Result {
	want, got := flatten(wantMsgs), flatten(gotMsgs)
	ok := func(out, ref ToolCall) bool { return e.callsMatch(out, ref) }
	// pair[i] = index in got matched to want[i], or -1.
	pair := maxMatching(want, got, ok)
	matched := 0
	for _, j := range pair {
		if j >= 0 {
			matched++
		}
	}
	var pass bool
	var partial float64
	var reason string
	switch e.opts.Mode {
	case TrajectoryStrict:
		pass, reason = strictMatch(wantMsgs, gotMsgs, ok)
		positional := 0
		for i := range min(len(want), len(got)) {
			if ok(got[i], want[i]) {
				positional++
			}
		}
		partial = ratio(positional, len(want), len(got))
	case TrajectoryUnordered:
		pass = matched == len(want) && matched == len(got)
		partial = ratio(matched, max(len(want), len(got)), len(got))
	case TrajectorySubset:
		pass = matched == len(got)
		partial = ratio(matched, len(got), 0)
		if len(got) == 0 {
			partial = 1
		}
	case TrajectorySuperset, TrajectoryAnyOrder:
		pass = matched == len(want)
		partial = ratio(matched, len(want), 0)
	case TrajectoryInOrder:
		k := 0
		for _, g := range got {
			if k < len(want) && ok(g, want[k]) {
				k++
			}
		}
		pass = k == len(want)
		partial = ratio(k, len(want), 0)
		if !pass {
			reason = fmt.Sprintf("reference call %d (%s) not found in order after the first %d", k, callString(want[k]), k)
		}
	}
	var unmatchedWant, unmatchedGot []ToolCall
	usedGot := make([]bool, len(got))
	for i, j := range pair {
		if j < 0 {
			unmatchedWant = append(unmatchedWant, want[i])
		} else {
			usedGot[j] = true
		}
	}
	for j, u := range usedGot {
		if !u {
			unmatchedGot = append(unmatchedGot, got[j])
		}
	}
	if reason == "" && !pass {
		var parts []string
		if e.opts.Mode != TrajectorySubset && len(unmatchedWant) > 0 {
			parts = append(parts, "missing: "+callsString(unmatchedWant))
		}
		if (e.opts.Mode == TrajectorySubset || e.opts.Mode == TrajectoryUnordered) && len(unmatchedGot) > 0 {
			parts = append(parts, "unexpected: "+callsString(unmatchedGot))
		}
		reason = strings.Join(parts, "; ")
	}
	res := Result{Pass: pass}
	switch {
	case e.opts.PartialCredit:
		res.Score = partial
	case pass:
		res.Score = 1
	}
	if pass {
		res.Reason = fmt.Sprintf("trajectory matches the reference (%s, args %s)", e.opts.Mode, e.opts.ArgsMode)
	} else {
		res.Reason = fmt.Sprintf("trajectory does not match the reference (%s, args %s): %s", e.opts.Mode, e.opts.ArgsMode, reason)
	}
	res.Details = map[string]any{
		"mode":               string(e.opts.Mode),
		"args_mode":          string(e.opts.ArgsMode),
		"expected_calls":     len(want),
		"actual_calls":       len(got),
		"matched":            matched,
		"unmatched_expected": unmatchedWant,
		"unmatched_actual":   unmatchedGot,
	}
	return res
}

// strictMatch is agentevals' strict mode over messages: same length, same role at each
// index, tool calls present in both or neither, and, within a message, the same number of
// calls matched one-to-one.
func strictMatch(want, got []message, ok func(out, ref ToolCall) bool) (bool, string) {
	if len(want) != len(got) {
		return false, fmt.Sprintf("%d steps, reference has %d", len(got), len(want))
	}
	for i := range want {
		w, g := want[i], got[i]
		if w.Role != g.Role {
			return false, fmt.Sprintf("step %d: role %q, reference %q", i, g.Role, w.Role)
		}
		if len(w.Calls) != len(g.Calls) {
			return false, fmt.Sprintf("step %d: %d tool calls, reference has %d", i, len(g.Calls), len(w.Calls))
		}
		for k, j := range maxMatching(w.Calls, g.Calls, ok) {
			if j < 0 {
				return false, fmt.Sprintf("step %d: missing %s", i, callString(w.Calls[k]))
			}
		}
	}
	return true, ""
}

// maxMatching pairs each want[i] with a distinct got[j] such that ok(got[j], want[i]),
// maximising the number of pairs (Kuhn's augmenting paths; O(V·E), trajectories are
// short). It returns, for each want item, its got index or -1.
func maxMatching(want, got []ToolCall, ok func(out, ref ToolCall) bool) []int {
	pair := make([]int, len(want))
	owner := make([]int, len(got))
	for i := range pair {
		pair[i] = -1
	}
	for j := range owner {
		owner[j] = -1
	}
	adj := make([][]int, len(want))
	for i, w := range want {
		for j, g := range got {
			if ok(g, w) {
				adj[i] = append(adj[i], j)
			}
		}
	}
	seen := make([]bool, len(got))
	var try func(i int) bool
	try = func(i int) bool {
		for _, j := range adj[i] {
			if seen[j] {
				continue
			}
			seen[j] = true
			if owner[j] < 0 || try(owner[j]) {
				owner[j] = i
				pair[i] = j
				return true
			}
		}
		return false
	}
	for i := range want {
		clear(seen)
		try(i)
	}
	return pair
}

func (e trajectoryEval) callsMatch(out, ref ToolCall) bool {
	if out.Name != ref.Name {
		return false
	}
	mode := e.opts.ArgsMode
	if m, ok := e.opts.ArgsOverrides[ref.Name]; ok {
		switch {
		case m.Func != nil:
			return m.Func(out.Args, ref.Args)
		case len(m.Keys) > 0:
			for _, k := range m.Keys {
				if !reflect.DeepEqual(path(out.Args, k), path(ref.Args, k)) {
					return false
				}
			}
			return true
		case m.Mode != "":
			mode = m.Mode
		}
	}
	return argsMatch(mode, out.Args, ref.Args)
}

func argsMatch(mode ArgsMode, out, ref map[string]any) bool {
	switch mode {
	case ArgsIgnore:
		return true
	case ArgsSubset:
		return containsAll(ref, out)
	case ArgsSuperset:
		return containsAll(out, ref)
	default:
		return len(out) == len(ref) && containsAll(out, ref)
	}
}

// containsAll reports whether every key of sub is in sup with an equal value.
func containsAll(sup, sub map[string]any) bool {
	for k, v := range sub {
		w, ok := sup[k]
		if !ok || !reflect.DeepEqual(normalizeDeep(v), normalizeDeep(w)) {
			return false
		}
	}
	return true
}

// normalizeDeep converts nested values to the JSON model so that 1 and 1.0 compare equal.
func normalizeDeep(v any) any {
	switch t := v.(type) {
	case nil, bool, float64, string:
		return v
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, x := range t {
			out[k] = normalizeDeep(x)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			out[i] = normalizeDeep(x)
		}
		return out
	default:
		n := normalize(v)
		if reflect.TypeOf(n) == reflect.TypeOf(v) {
			return n
		}
		return normalizeDeep(n)
	}
}

// path returns the value at a dotted key path ("time.start"), nil when absent.
func path(m map[string]any, p string) any {
	var cur any = m
	for part := range strings.SplitSeq(p, ".") {
		obj, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = obj[part]
	}
	return normalizeDeep(cur)
}

func callString(c ToolCall) string {
	if len(c.Args) == 0 {
		return c.Name + "()"
	}
	b, _ := json.Marshal(c.Args)
	return c.Name + string(b)
}

func callsString(cs []ToolCall) string {
	s := make([]string, len(cs))
	for i, c := range cs {
		s[i] = callString(c)
	}
	sort.Strings(s)
	return strings.Join(s, ", ")
}
