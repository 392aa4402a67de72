// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package semconv // import "github.com/agenteval/agenteval-collector/internal/semconv"

// Keys written by the agentsession receiver's evaluation channel on the spans its
// messages become (docs/channel.md). With gen_ai.conversation.id = the channel session
// id, they let a trace backend find every message of a session and its transcript.
const (
	// AgentEvalChannelEvaluationID is the evaluation id of the session (string).
	AgentEvalChannelEvaluationID = "agent_eval.channel.evaluation.id"
	// AgentEvalChannelSessionKind is "proctored" or "live_class_work".
	AgentEvalChannelSessionKind = "agent_eval.channel.session.kind"
	// AgentEvalChannelMessageID is the message id (eval_msg_...).
	AgentEvalChannelMessageID = "agent_eval.channel.message.id"
	// AgentEvalChannelMessageRole is the sender's role: proctor, candidate, host or
	// participant.
	AgentEvalChannelMessageRole = "agent_eval.channel.message.role"
	// AgentEvalChannelMessageSequence is the message's sequence in its session (int, from 1).
	AgentEvalChannelMessageSequence = "agent_eval.channel.message.sequence"
	// AgentEvalChannelMessageContent is the text of a user-side (proctor, host) message
	// on its own span; an agent-side message is the agent span's gen_ai.output.messages.
	AgentEvalChannelMessageContent = "agent_eval.channel.message.content"
	// AgentEvalChannelSenderID is the sender's agent id.
	AgentEvalChannelSenderID = "agent_eval.channel.sender.id"
	// AgentEvalChannelRegistrationID is the proctored session's registration id.
	AgentEvalChannelRegistrationID = "agent_eval.channel.registration.id"
	// AgentEvalChannelResultID is the result id, on the span of the proctor's submit.
	AgentEvalChannelResultID = "agent_eval.channel.result.id"
	// AgentEvalChannelProctorID is the proctor's agent id, on the submit span.
	AgentEvalChannelProctorID = "agent_eval.channel.proctor.id"
	// AgentEvalChannelFeedback is the proctor's feedback, on the submit span.
	AgentEvalChannelFeedback = "agent_eval.channel.proctor.feedback"
	// AgentEvalChannelTranscript is the URL path of the result's transcript
	// (/api/v1/evaluations/{id}/results/{result_id}/transcript), on the submit span.
	AgentEvalChannelTranscript = "agent_eval.channel.transcript"
)
