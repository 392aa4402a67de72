// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package text // import "github.com/agenteval/agenteval-collector/internal/text"

import (
	"math/bits"
	"strings"
	"sync"
	"sync/atomic"
)

// Tasks is a set of the tasks a text names: what a request asks the agents to do, or
// what a tool call or an answer does (cancel, refund, translate...). Intent drift reads
// it to tell an agent that acts on the user's object but does another task ("Translate
// my cover letter" → summarize_document) from one that does the task in other words
// (docs/decisions/text.md §10).
type Tasks uint16

// The tasks: each is a group of verbs and nouns that name it in English, French,
// Spanish and German, found by their stems (taskWords).
const (
	TaskCancel Tasks = 1 << iota
	TaskRefund
	TaskTranslate
	TaskSummarize
	TaskBook
	TaskReplace
	TaskDiscount
	TaskTrack
	TaskReset
	TaskBlock
	// The lookups: what an information request asks about and what a lookup tool
	// returns. They are tasks as the others are: a request for the weather is not served
	// by a hotel search.
	TaskWeather
	TaskPrice
	TaskStatus
	TaskLodging
	TaskDining
)

// Lookups are the tasks that ask for information (TaskWeather, TaskPrice, TaskStatus,
// TaskLodging, TaskDining); the others act.
const Lookups = TaskWeather | TaskPrice | TaskStatus | TaskLodging | TaskDining

var taskNames = [...]string{"cancel", "refund", "translate", "summarize", "book", "replace", "discount", "track", "reset", "block",
	"weather", "price", "status", "lodging", "dining"}

// taskWords are the stems (Tokens' output) that name each task. An entry ending in "*"
// is a prefix of the stem; the others are whole stems. Short or ambiguous stems are
// whole ("prom" is "promo", not "promise"); words shared by two tasks name neither.
// Deleting a record and terminating a plan are cancellations: a user who says "cancel my
// appointment" is served by delete_appointment.
var taskWords = map[Tasks]string{
	TaskCancel: "cancel* void* delet* remov* terminat* unsubscrib* annul* resili* supprim* anul* elimin* " +
		"kundig* gekundigt storn* losch* geloscht abbestell* abmeld* beend*",
	TaskRefund:    "refund* reimbur* rembour* reembol* devolu* erstat* ruckerstat* zuruckerstat*",
	TaskTranslate: "translat* transl tradu* ubersetz*",
	TaskSummarize: "summar* resum* zusammenfass*",
	TaskBook:      "book* reserv* buch* gebucht",
	TaskReplace:   "replac* exchang* reship* remplac* echang* reemplaz* ersetz* ersatz* umtausch*",
	TaskDiscount:  "discount* coupon* cupon* prom promotion* upgrad* surclass* descuent* rabat* gutschein*",
	TaskTrack:     "track* suivi suivr rastr* seguimient* verfolg* sendungsverfolg*",
	TaskReset:     "reset* reinitiali* restablec* zurucksetz*",
	TaskBlock:     "block* lock froz bloqu* congel* sper gesperrt",
	TaskWeather:   "weath* rain raini snow wet regn regnet schn plui pleuv pleut llov lluvi pronostic* niev",
	TaskPrice:     "pric* cost fee tarif* cuest cuestan cout prei kost kostet gebuhr*",
	TaskStatus:    "status statut delay* verspat* eta",
	TaskLodging:   "hotel* hostel* heberg* alojamient* unterkunft*",
	TaskDining:    "restaurant*",
}

// nameTaskWords are stems that name a task only in a tool's name ("get_forecast",
// "get_fare_estimate"); in a message they are other words ("the sales forecast", "how
// far").
var nameTaskWords = map[string]Tasks{"forecast": TaskWeather, "far": TaskPrice}

// taskWhole maps a whole stem to its task; taskPrefixes maps the first taskKeyLen bytes of
// each prefix entry (every one is at least that long) to the entries.
var taskWhole, taskPrefixes = buildTaskIndex()

const taskKeyLen = 4

type taskPrefix struct {
	p string
	t Tasks
}

func buildTaskIndex() (map[string]Tasks, map[string][]taskPrefix) {
	whole := map[string]Tasks{}
	prefixes := map[string][]taskPrefix{}
	for t, list := range taskWords {
		for _, w := range strings.Fields(list) {
			p, ok := strings.CutSuffix(w, "*")
			if !ok {
				whole[w] |= t
				continue
			}
			if len(p) < taskKeyLen {
				panic("text: task prefix shorter than taskKeyLen: " + w)
			}
			prefixes[p[:taskKeyLen]] = append(prefixes[p[:taskKeyLen]], taskPrefix{p, t})
		}
	}
	return whole, prefixes
}

// TaskOf returns the task the stem tok (one of Tokens' output) names, or zero: most
// words name none, and a word of two tasks names neither.
func TaskOf(tok string) Tasks {
	t := taskWhole[tok]
	if len(tok) >= taskKeyLen {
		for _, p := range taskPrefixes[tok[:taskKeyLen]] {
			if strings.HasPrefix(tok, p.p) {
				t |= p.t
			}
		}
	}
	if bits.OnesCount16(uint16(t)) > 1 {
		return 0
	}
	return t
}

// TasksOf returns the union of TaskOf over toks.
func TasksOf(toks []string) Tasks {
	var t Tasks
	for _, tok := range toks {
		t |= TaskOf(tok)
	}
	return t
}

// Serves reports whether doing the tasks t serves a request for want: they share a
// task; or t cancels where want asks for a refund or the other way round (a cancelled
// paid order is refunded; a refund of an unshipped order cancels it); or one tracks and
// the other asks a status; or one books and the other is about a hotel or a restaurant
// ("Book me a room in Porto" → hotel_checkout, "Find me a hotel" → book_room).
func (t Tasks) Serves(want Tasks) bool {
	served := t
	if t&(TaskCancel|TaskRefund) != 0 {
		served |= TaskCancel | TaskRefund
	}
	if t&(TaskTrack|TaskStatus) != 0 {
		served |= TaskTrack | TaskStatus
	}
	if t&(TaskLodging|TaskDining) != 0 {
		served |= TaskBook
	}
	if t&TaskBook != 0 {
		served |= TaskLodging | TaskDining
	}
	return served&want != 0
}

// TasksOfName returns the tasks a tool name names (TasksOf of its Tokens: "_", "-" and
// "." separate words, "summarize_document" is summarize), with the words that name a task
// only there (nameTaskWords: "get_forecast" is weather). A deployment calls few tools and
// every turn reads its calls' names, so the result is cached by name: at most
// maxCachedNames names of at most maxCachedNameLen bytes, the others computed each time.
func TasksOfName(name string) Tasks {
	if v, ok := nameTasks.Load(name); ok {
		return v.(Tasks)
	}
	var t Tasks
	for _, tok := range Tokens(name) {
		t |= TaskOf(tok) | nameTaskWords[tok]
	}
	if len(name) <= maxCachedNameLen && cachedNames.Load() < maxCachedNames {
		if _, loaded := nameTasks.LoadOrStore(strings.Clone(name), t); !loaded {
			cachedNames.Add(1)
		}
	}
	return t
}

const (
	maxCachedNames   = 4096
	maxCachedNameLen = 128
)

var (
	nameTasks   sync.Map // tool name → Tasks
	cachedNames atomic.Int32
)

// String lists the tasks' names, joined by "/" ("cancel/refund"); "" for none.
func (t Tasks) String() string {
	var names []string
	for i, n := range taskNames {
		if t&(1<<i) != 0 {
			names = append(names, n)
		}
	}
	return strings.Join(names, "/")
}

// TimeToken reports whether tok (one of Tokens' output) names a time: a weekday, a
// relative day ("tomorrow", "demain", "heute"), a part of the day or a unit of time. Such
// a word of a request says when, not what: a call that shares only it acts on no object
// of the request.
func TimeToken(tok string) bool {
	_, ok := timeTokens[tok]
	return ok
}

var timeTokens = func() map[string]struct{} {
	m := map[string]struct{}{}
	for _, tok := range Tokens(timeWordList + " " + weekdayList) {
		m[tok] = struct{}{}
	}
	return m
}()
