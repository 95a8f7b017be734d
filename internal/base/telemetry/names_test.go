package telemetry_test

import (
	"testing"

	"go.opentelemetry.io/otel/attribute"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"

	"github.com/acpgate/acpgate/internal/base/telemetry"
)

// The keys written out in names.go are the conventions' of the pinned
// version.
func TestNamesAreTheConventions(t *testing.T) {
	if telemetry.SchemaURL != semconv.SchemaURL || "https://opentelemetry.io/schemas/"+telemetry.SemconvVersion != semconv.SchemaURL {
		t.Errorf("schema %s (version %s), semconv's %s", telemetry.SchemaURL, telemetry.SemconvVersion, semconv.SchemaURL)
	}
	for ours, theirs := range map[attribute.Key]attribute.Key{
		telemetry.KeyErrorType: semconv.ErrorTypeKey, telemetry.KeyOperationName: semconv.GenAIOperationNameKey,
		telemetry.KeyAgentName: semconv.GenAIAgentNameKey, telemetry.KeyAgentVersion: semconv.GenAIAgentVersionKey,
		telemetry.KeyConversationID: semconv.GenAIConversationIDKey, telemetry.KeyProviderName: semconv.GenAIProviderNameKey,
		telemetry.KeyRequestModel: semconv.GenAIRequestModelKey, telemetry.KeyResponseFinishReasons: semconv.GenAIResponseFinishReasonsKey,
		telemetry.KeyInputMessages: semconv.GenAIInputMessagesKey, telemetry.KeyOutputMessages: semconv.GenAIOutputMessagesKey,
		telemetry.KeyTokenType: semconv.GenAITokenTypeKey, telemetry.KeyUsageInputTokens: semconv.GenAIUsageInputTokensKey,
		telemetry.KeyUsageOutputTokens: semconv.GenAIUsageOutputTokensKey, telemetry.KeyUsageCacheReadTokens: semconv.GenAIUsageCacheReadInputTokensKey,
		telemetry.KeyUsageCacheCreationTokens: semconv.GenAIUsageCacheCreationInputTokensKey, telemetry.KeyToolName: semconv.GenAIToolNameKey,
		telemetry.KeyToolCallID: semconv.GenAIToolCallIDKey, telemetry.KeyToolType: semconv.GenAIToolTypeKey,
		telemetry.KeyToolCallArguments: semconv.GenAIToolCallArgumentsKey, telemetry.KeyToolCallResult: semconv.GenAIToolCallResultKey,
		telemetry.KeyPromptName: semconv.GenAIPromptNameKey, telemetry.KeyMCPMethodName: semconv.McpMethodNameKey,
		telemetry.KeyMCPProtocolVersion: semconv.McpProtocolVersionKey, telemetry.KeyMCPResourceURI: semconv.McpResourceURIKey,
		telemetry.KeyMCPSessionID: semconv.McpSessionIDKey, telemetry.KeyNetworkTransport: semconv.NetworkTransportKey,
	} {
		if ours != theirs {
			t.Errorf("%s: the conventions say %s", ours, theirs)
		}
	}
	for ours, theirs := range map[attribute.KeyValue]attribute.KeyValue{
		telemetry.KeyOperationName.String("invoke_agent"): semconv.GenAIOperationNameInvokeAgent,
		telemetry.KeyOperationName.String("chat"):         semconv.GenAIOperationNameChat,
		telemetry.KeyOperationName.String("execute_tool"): semconv.GenAIOperationNameExecuteTool,
		telemetry.KeyTokenType.String("input"):            semconv.GenAITokenTypeInput,
		telemetry.KeyTokenType.String("output"):           semconv.GenAITokenTypeOutput,
		telemetry.KeyNetworkTransport.String("pipe"):      semconv.NetworkTransportPipe,
		telemetry.KeyNetworkTransport.String("tcp"):       semconv.NetworkTransportTCP,
	} {
		if ours != theirs {
			t.Errorf("%v: the conventions say %v", ours, theirs)
		}
	}
}
