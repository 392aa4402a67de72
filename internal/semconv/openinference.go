// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package semconv // import "github.com/agenteval/agenteval-collector/internal/semconv"

// OpenInference (Arize) attribute keys, spec 2026-08 / python semconv 0.1.32
// (docs/decisions/conventions.md). Indexed keys are written as prefixes and suffixes:
// "llm.input_messages." + N + ".message.role".
const (
	OpenInferenceSpanKind = "openinference.span.kind"

	InputValue     = "input.value"
	InputMimeType  = "input.mime_type"
	OutputValue    = "output.value"
	OutputMimeType = "output.mime_type"
	MimeJSON       = "application/json"
	MimeText       = "text/plain"

	SessionID = "session.id"
	// Metadata is a JSON string (LangGraph: langgraph_node, langgraph_step, thread_id).
	Metadata = "metadata"
	TagTags  = "tag.tags"

	AgentName         = "agent.name"
	GraphNodeID       = "graph.node.id"
	GraphNodeName     = "graph.node.name"
	GraphNodeParentID = "graph.node.parent_id"

	ToolNameOI    = "tool.name"
	ToolDescOI    = "tool.description"
	ToolParamsOI  = "tool.parameters" // a JSON Schema OR the arguments (docs/decisions/conventions.md)
	ToolSchemaOI  = "tool.json_schema"
	ToolIDOI      = "tool.id" // the tool-call id
	ToolCallIDOI  = "tool_call.id"
	LLMModelName  = "llm.model_name"
	LLMProvider   = "llm.provider"
	LLMSystem     = "llm.system"
	LLMInvocation = "llm.invocation_parameters"

	LLMTokenCountPrompt     = "llm.token_count.prompt"
	LLMTokenCountCompletion = "llm.token_count.completion"
	LLMTokenCountTotal      = "llm.token_count.total"
	LLMTokenCacheRead       = "llm.token_count.prompt_details.cache_read"
	LLMTokenCacheWrite      = "llm.token_count.prompt_details.cache_write"
	LLMTokenReasoning       = "llm.token_count.completion_details.reasoning"
	LLMCostTotal            = "llm.cost.total"

	// Flattened message lists: PrefixLLMInputMessages + "<i>." + suffix.
	PrefixLLMInputMessages  = "llm.input_messages."
	PrefixLLMOutputMessages = "llm.output_messages."
	PrefixLLMTools          = "llm.tools." // + "<i>.tool.json_schema"

	SuffixMessageRole       = "message.role"
	SuffixMessageContent    = "message.content"
	SuffixMessageContents   = "message.contents." // + "<j>.message_content.{type,text}"
	SuffixMessageName       = "message.name"
	SuffixMessageToolCallID = "message.tool_call_id"
	SuffixMessageToolCalls  = "message.tool_calls." // + "<j>.tool_call.{id,function.name,function.arguments}"
	SuffixContentType       = "message_content.type"
	SuffixContentText       = "message_content.text"
	SuffixToolCallID        = "tool_call.id"
	SuffixToolCallFuncName  = "tool_call.function.name"
	SuffixToolCallFuncArgs  = "tool_call.function.arguments"
	SuffixToolJSONSchema    = "tool.json_schema"

	// Evaluations written by OpenInference-aware tools (docs/decisions/conventions.md).
	PrefixOIEvaluations        = "evaluations."
	PrefixOITraceEvaluations   = "trace.evaluations."
	PrefixOISessionEvaluations = "session.evaluations."
)

// openinference.span.kind values (docs/decisions/conventions.md).
const (
	OIKindLLM       = "LLM"
	OIKindEmbedding = "EMBEDDING"
	OIKindChain     = "CHAIN"
	OIKindRetriever = "RETRIEVER"
	OIKindReranker  = "RERANKER"
	OIKindTool      = "TOOL"
	OIKindAgent     = "AGENT"
	OIKindGuardrail = "GUARDRAIL"
	OIKindEvaluator = "EVALUATOR"
	OIKindPrompt    = "PROMPT"
	OIKindUnknown   = "UNKNOWN"
)

// OIHandoffSpanPrefix starts the name of the OpenInference openai-agents TOOL span that
// records a handoff: "handoff to <agent>", input.value = from, output.value = to.
const OIHandoffSpanPrefix = "handoff to "
