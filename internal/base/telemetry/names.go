package telemetry

import "go.opentelemetry.io/otel/attribute"

// The attribute keys of the semantic conventions v1.41.0 that acpgate
// records, as go.opentelemetry.io/otel/semconv/v1.41.0 names them (its
// test checks each against that package). They are written out here so
// that the instrumented packages do not compile the conventions' 16,000
// lines (the demo build's first-build cost, docs/benchmarks.md).
const (
	KeyErrorType                = attribute.Key("error.type")
	KeyOperationName            = attribute.Key("gen_ai.operation.name")
	KeyAgentName                = attribute.Key("gen_ai.agent.name")
	KeyAgentVersion             = attribute.Key("gen_ai.agent.version")
	KeyConversationID           = attribute.Key("gen_ai.conversation.id")
	KeyProviderName             = attribute.Key("gen_ai.provider.name")
	KeyRequestModel             = attribute.Key("gen_ai.request.model")
	KeyResponseFinishReasons    = attribute.Key("gen_ai.response.finish_reasons")
	KeyInputMessages            = attribute.Key("gen_ai.input.messages")
	KeyOutputMessages           = attribute.Key("gen_ai.output.messages")
	KeyTokenType                = attribute.Key("gen_ai.token.type")
	KeyUsageInputTokens         = attribute.Key("gen_ai.usage.input_tokens")
	KeyUsageOutputTokens        = attribute.Key("gen_ai.usage.output_tokens")
	KeyUsageCacheReadTokens     = attribute.Key("gen_ai.usage.cache_read.input_tokens")
	KeyUsageCacheCreationTokens = attribute.Key("gen_ai.usage.cache_creation.input_tokens")
	KeyToolName                 = attribute.Key("gen_ai.tool.name")
	KeyToolCallID               = attribute.Key("gen_ai.tool.call.id")
	KeyToolType                 = attribute.Key("gen_ai.tool.type")
	KeyToolCallArguments        = attribute.Key("gen_ai.tool.call.arguments")
	KeyToolCallResult           = attribute.Key("gen_ai.tool.call.result")
	KeyPromptName               = attribute.Key("gen_ai.prompt.name")
	KeyMCPMethodName            = attribute.Key("mcp.method.name")
	KeyMCPProtocolVersion       = attribute.Key("mcp.protocol.version")
	KeyMCPResourceURI           = attribute.Key("mcp.resource.uri")
	KeyMCPSessionID             = attribute.Key("mcp.session.id")
	KeyNetworkTransport         = attribute.Key("network.transport")
)

// SchemaURL is the schema of the semantic conventions v1.41.0.
const SchemaURL = "https://opentelemetry.io/schemas/1.41.0"
