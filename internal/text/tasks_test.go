// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package text

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestTasksOf(t *testing.T) {
	tests := []struct {
		text string
		want Tasks
	}{
		{"Cancel my Premium plan today", TaskCancel},
		{"delete_appointment appointment id AP-7781", TaskCancel},
		{"Kündige meinen Handyvertrag; beende_abonnement", TaskCancel},
		{"Résilier mon abonnement", TaskCancel},
		{"Please refund order 55102", TaskRefund},
		{"Reembolsa el pedido 30117", TaskRefund},
		{"Translate my cover letter into German", TaskTranslate},
		{"Traduis ce contrat; übersetze den Vertrag", TaskTranslate},
		{"summarize_document; Voici un résumé; Zusammenfassung", TaskSummarize},
		{"Book me a room; reserve_room; Buchung", TaskBook},
		{"create_replacement item lamp", TaskReplace},
		{"apply_discount percent 30; Rabatt gutgeschrieben", TaskDiscount},
		{"track_parcel tracking 1Z84X", TaskTrack},
		{"send_reset_link; réinitialiser", TaskReset},
		{"freeze_card; Bloquea mi tarjeta; congelar_tarjeta", TaskBlock},
		{"Cancel order 3310 and refund me", TaskCancel | TaskRefund},
		// The lookups.
		{"Will it rain in Lisbon?; Va-t-il pleuvoir ?; ¿Va a llover?", TaskWeather},
		{"How much does it cost?; Wie viel kostet das?; ¿Cuánto cuesta?; Combien ça coûte ?", TaskPrice},
		{"Is my train delayed?; What's the status of order 77120?; Ist der Zug verspätet?", TaskStatus},
		{"Find me a hotel in Porto; un hébergement; alojamiento", TaskLodging},
		{"any good restaurants near the station?", TaskDining},
		{"Book a hotel room", TaskBook | TaskLodging},
		// Most words name no task; short stems are whole words only, and the words that
		// name a task only in a tool's name are other words in a message. Words of other
		// things than a lookup are left out (review 13): an umbrella to buy, a sales
		// forecast, a CPU temperature, a storage quota, a trade-in, "lodge a claim".
		{"What do I need in Paris tomorrow?", 0},
		{"I promise the prompt was fine", 0},
		{"el mejor momento", 0},
		{"how far is it; the Q3 sales forecast", 0},
		{"Where can I buy an umbrella?; the CPU temperature; my storage quota; a trade-in; lodge a claim", 0},
		{"", 0},
	}
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			assert.Equal(t, tt.want, TasksOf(Tokens(tt.text)), "tasks %s", TasksOf(Tokens(tt.text)))
		})
	}
}

func TestTasksServes(t *testing.T) {
	assert.True(t, TaskTranslate.Serves(TaskTranslate))
	assert.False(t, TaskSummarize.Serves(TaskTranslate))
	assert.True(t, TaskCancel.Serves(TaskRefund), "a cancelled paid order is refunded")
	assert.True(t, TaskRefund.Serves(TaskCancel), "a refund of an unshipped order cancels it")
	assert.False(t, TaskDiscount.Serves(TaskCancel))
	assert.True(t, (TaskTrack | TaskBook).Serves(TaskBook))
	assert.False(t, Tasks(0).Serves(TaskBook))
	assert.True(t, TaskLodging.Serves(TaskBook), `"Book me a room in Porto" → hotel_checkout`)
	assert.True(t, TaskBook.Serves(TaskDining), `"Find a restaurant for tonight" → book_table`)
	assert.False(t, TaskLodging.Serves(TaskWeather), "a hotel search is no forecast")
	assert.False(t, TaskLodging.Serves(TaskDining))
	assert.True(t, TaskTrack.Serves(TaskStatus), `"Is my parcel delayed?" → track_parcel`)
	assert.True(t, TaskStatus.Serves(TaskTrack))
	assert.Equal(t, "cancel/refund", (TaskCancel | TaskRefund).String())
	assert.Empty(t, Tasks(0).String())
}

// TestTaskWordsAreOneTaskEach checks the lexicon: every entry names one task (a stem of
// two tasks would name neither, silently), and TaskOf finds each entry's own stem.
func TestTaskWordsAreOneTaskEach(t *testing.T) {
	for task, list := range taskWords {
		for _, w := range strings.Fields(list) {
			stem, _ := strings.CutSuffix(w, "*")
			assert.Equal(t, task, TaskOf(stem), "%q of %s", w, task)
		}
	}
}

func TestTimeToken(t *testing.T) {
	for _, w := range []string{"Saturday", "tomorrow", "demain", "sábado", "Woche", "morning"} {
		toks := Tokens(w)
		if assert.Len(t, toks, 1, w) {
			assert.True(t, TimeToken(toks[0]), w)
		}
	}
	assert.False(t, TimeToken(Tokens("Lisbon")[0]))
}

func TestTasksOfName(t *testing.T) {
	for range 2 { // computed, then cached
		assert.Equal(t, TaskSummarize, TasksOfName("summarize_document"))
		assert.Equal(t, TaskCancel, TasksOfName("cancel-order.v2"))
		assert.Equal(t, TaskWeather, TasksOfName("get_forecast"))
		assert.Equal(t, Tasks(0), TasksOfName("get_card_events"))
		// Words that name a task only in a tool's name.
		assert.Equal(t, TaskPrice, TasksOfName("get_fare_estimate"))
		// Verbs that are other things in names too (review 13): end_call, get_stop_departures,
		// fin_monthly_report, met_tickets.
		for _, name := range []string{"end_call", "get_stop_departures", "fin_monthly_report", "met_tickets", "send_email"} {
			assert.Equal(t, Tasks(0), TasksOfName(name), name)
		}
	}
	long := strings.Repeat("x", maxCachedNameLen) + "_refund"
	assert.Equal(t, TaskRefund, TasksOfName(long), "a long name is computed, not cached")
	_, cached := nameTasks.Load(long)
	assert.False(t, cached)
}
