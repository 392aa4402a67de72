// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package evaluation

import (
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDetectFollowUp(t *testing.T) {
	e := newEval(t)
	tests := []struct {
		name, request, answer, followUp string
		want                            string
		reason                          string // a part of the reason
	}{
		{"seed correction cue", "Sort this list descending: 3, 9, 1", "Sorted: 1, 3, 9", "No, I meant descending.", DetectionRDM, `cue "no, I meant"`},
		{"contradiction without cue", "What is the capital of Portugal?", "The capital of Portugal is Madrid.", "Lisbon, not Madrid!", DetectionRDM, `the answer said "madrid"`},
		{"restated request", "Livre-le à mon bureau.", "Je le livre à votre domicile, 8 rue des Lilas.", "Au bureau, pas à la maison !", DetectionRDM, `"au bureau, pas a la maison": the request's "bureau" is missing from the answer`},
		{"language", "Translate 'good morning' into German.", "En français : « bonjour ».", "That's French. I need German.", DetectionRDM, `cue "that's French"`},
		{"swapped", "Book the dentist for 03/04, 10am.", "Done: April 3rd at 10:00.", "You swapped the day and month, it's March 4th.", DetectionRDM, `cue "you swapped"`},
		{"one-word correction", "Capital of Peru?", "Bogotá.", "Wrong.", DetectionRDM, `cue "wrong"`},
		{"verbatim re-ask", "Where is my order 5521?", "I can help with orders.", "Where is my order 5521?", DetectionCCM, "word for word"},
		{"reworded re-ask", "When will my package arrive?", "Packages are handled by our logistics partner.", "Yes but when is my package going to arrive?", DetectionCCM, "re-asks the same request (similarity"},
		{"acceptance and action on the served entity", "Where is order #123?", "Order #123 is in the warehouse.", "OK, then cancel #123 please.", DetectionNone, ""},
		{"same question about another entity", "What's the weather in Paris today?", "Paris: 18°C and sunny.", "What's the weather in Lyon today?", DetectionNone, ""},
		{"answered request", "Is order 4410 eligible for a refund?", "Yes, order 4410 is within the 30-day window and eligible.", "Then refund order 4410.", DetectionNone, ""},
		{"no answering the agent's question", "Cancel my subscription.", "Now or at the end of the period?", "No, at the end of the period.", DetectionNone, ""},
		{"contrast choosing an offered option", "Ship my order.", "Express or standard?", "Standard, not express.", DetectionNone, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := e.DetectFollowUp(tt.request, tt.answer, tt.followUp)
			assert.Equal(t, tt.want, d.Type, "%+v", d)
			assert.Contains(t, d.Reason+" "+strings.Join(d.Checks, "; "), tt.reason)
			assert.NotEmpty(t, d.Reason)
			assert.GreaterOrEqual(t, d.Confidence, 0.0)
			assert.LessOrEqual(t, d.Confidence, 1.0)
		})
	}
}

// TestDetectFollowUpBadInput: empty, one-word, emoji-only, 1 MB, mixed-script and invalid
// UTF-8 follow-ups give none with a reason, never a panic.
func TestDetectFollowUpBadInput(t *testing.T) {
	e := newEval(t)
	const req, ans = "Where is my order 5521?", "Order 5521 shipped yesterday."
	big := strings.Repeat("lorem ipsum dolor sit amet ", 1<<20/27+1)
	tests := map[string]string{
		"empty":         "",
		"blank":         " \t\n ",
		"one word":      "asdf",
		"emoji only":    "👍🎉🙏",
		"punctuation":   "?!…",
		"1 MB":          big,
		"mixed script":  "Где мой заказ? 我的订单 ist wo? où est-il",
		"invalid UTF-8": "\xff\xfe\xc3 \x80\x80 zz",
	}
	for name, f := range tests {
		t.Run(name, func(t *testing.T) {
			for _, args := range [][3]string{{req, ans, f}, {f, ans, f}, {f, f, f}, {req, f, f}} {
				d := e.DetectFollowUp(args[0], args[1], args[2])
				if args[0] == args[2] && d.Type == DetectionCCM {
					continue // the same text twice is a verbatim re-ask whatever it says
				}
				assert.Equal(t, DetectionNone, d.Type, "%+v", d)
				assert.NotEmpty(t, d.Reason)
			}
		})
	}
	// A whole session with bad follow-ups evaluates without panic.
	for _, f := range tests {
		s := followUpSession(followUpItem{ID: "bad", Prev: req, Answer: ans, Next: f})
		tr := e.EvaluateTurn(s, 0, true)
		require.NotEmpty(t, tr.Reason)
	}
}

// FuzzDetectFollowUp: no panic, a known type, a confidence in [0,1] and a reason for any
// request, answer and follow-up.
func FuzzDetectFollowUp(f *testing.F) {
	f.Add("What is the capital of Portugal?", "The capital of Portugal is Madrid.", "Lisbon, not Madrid!")
	f.Add("Where is order #123?", "Order #123 is in the warehouse.", "OK, then cancel #123 please.")
	f.Add("Comment réinitialiser mon mot de passe ?", "Le mot de passe doit contenir 12 caractères.", "Oui mais comment ?")
	f.Add("\xff\xfe", "", "no, nicht, pas ,,, not")
	f.Add("", "?", "👍")
	e, err := New(DefaultConfig())
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, request, answer, followUp string) {
		d := e.DetectFollowUp(request, answer, followUp)
		switch d.Type {
		case DetectionRDM, DetectionCCM, DetectionNone:
		default:
			t.Fatalf("type %q", d.Type)
		}
		if d.Confidence < 0 || d.Confidence > 1 || d.Confidence != d.Confidence || d.Reason == "" {
			t.Fatalf("%+v", d)
		}
	})
}

// BenchmarkDetectFollowUp runs the follow-up detection over the labelled corpus of
// testdata/turns (corpus: its messages as written, 20–120 bytes; 1KB: each message made
// about 1 KB long by appending the next `none` items' messages, so that every check runs)
// and reports µs per turn.
func BenchmarkDetectFollowUp(b *testing.B) {
	e, err := New(DefaultConfig())
	if err != nil {
		b.Fatal(err)
	}
	items := loadFollowUps(b)
	var plain []followUpItem // `none` items: no cue ends the checks early
	for _, it := range items {
		if it.Label == DetectionNone {
			plain = append(plain, it)
		}
	}
	grow := func(i int, field func(followUpItem) string) string {
		var sb strings.Builder
		for k := i; sb.Len() < 1000-120; k++ {
			sb.WriteString(field(plain[k%len(plain)]))
			sb.WriteString(" ")
		}
		return sb.String()
	}
	long := make([]followUpItem, len(items))
	for i := range items {
		long[i] = followUpItem{
			Prev:   grow(i, func(it followUpItem) string { return it.Prev }),
			Answer: grow(i, func(it followUpItem) string { return it.Answer }),
			Next:   grow(i, func(it followUpItem) string { return it.Next }),
		}
	}
	for _, bc := range []struct {
		name  string
		items []followUpItem
	}{{"corpus", items}, {"1KB", long}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			n := 0
			for b.Loop() {
				it := bc.items[n%len(bc.items)]
				e.DetectFollowUp(it.Prev, it.Answer, it.Next)
				n++
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(n), "µs/turn")
		})
	}
}

// TestFollowUpDetector: the detector's states before and without a follow-up, and its
// verdict once the next user message is known.
func TestFollowUpDetector(t *testing.T) {
	two := newSession("f", supportAgents(),
		turn(0, "What is the status of order #12345?", "Order #12345 shipped.", 10, interaction("support", "", "Order #12345 shipped.", 10)),
		turn(1, "That's wrong, it was cancelled.", "Sorry.", 10, interaction("support", "", "Sorry.", 10)))
	tests := []struct {
		name  string
		ti    int
		final bool
		blank bool
		typ   string // "" when no verdict
		expl  string
		conf  float64 // followUpConf; <0 when the checks did not run
	}{
		{"pending", 0, false, false, "", "rdm/ccm: pending (follow-up not known yet)", -1},
		{"last turn", 1, true, false, "", "rdm/ccm: not applicable (last turn, no follow-up)", -1},
		{"follow-up not captured", 0, true, true, "", "rdm/ccm: not checked (follow-up user message not captured)", -1},
		{"correction", 0, true, false, DetectionRDM, "rdm: detected", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := *two
			s.Turns = slices.Clone(two.Turns)
			if tt.blank {
				s.Turns[1].UserMessage = " "
			}
			x := detectInput{ti: tt.ti, final: tt.final, followUpConf: -1}
			d := followUpDetector{}.detect(newEval(t).newCtx(&s), &x)
			require.NotEmpty(t, x.expl)
			assert.True(t, strings.HasPrefix(x.expl[0], tt.expl), x.expl[0])
			if tt.typ == "" {
				assert.False(t, d.bad)
				assert.InDelta(t, tt.conf, x.followUpConf, 0)
				return
			}
			assert.Equal(t, tt.typ, d.typ)
			assert.True(t, d.bad)
			assert.Greater(t, x.followUpConf, 0.0)
		})
	}
}
