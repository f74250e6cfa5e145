//! Every public path of the facade as its documentation listed them before
//! the third floor plan moved providers, the catalogue, turns, the code
//! mode and the surface checks out of toolbox-core (rustdoc's item list of
//! `toolbox` at 4da99d7, default features and every feature; re-exported
//! third-party crates such as `toolbox::serde` aside). Each is imported
//! here, so a path that no longer resolves fails the build: the default
//! features in `cargo test`, every feature in `cargo clippy --all-features
//! --all-targets`. Modules are named too, each as a path of its own.

/// The paths of the default features.
#[allow(unused_imports)]
mod default_features {
    use toolbox::args::{
        echo as _, normalize as _, Adjustment as _, Args as _, Arguments as _, CallArguments as _,
        Change as _, JsonPath as _, PathStep as _, ToolCall as _, ECHO_LIMIT as _, MAX_DEPTH as _,
    };
    use toolbox::boxes::{
        read_tape as _, time_limited as _, tool_fn as _, try_tool_fn as _, AlwaysTrue as _,
        DeferredToolBox as _, EmptyToolBox as _, FilteredToolBox as _, FnTool as _, FnToolBox as _,
        MultiToolBox as _, MultiToolBoxBuilder as _, ObservedToolBox as _, RecordingToolBox as _,
        ReplayToolBox as _, Tape as _, TapeDefect as _, TapeEntry as _, TapeError as _,
        TimeoutToolBox as _, ToolClosure as _, ToolCondition as _, DEFERRED_ANSWER as _,
        MAX_TAPE_LINE as _,
    };
    use toolbox::catalog::{
        check_query as _, Catalog as _, CatalogError as _, Revealed as _, SearchHit as _,
        ToolIndex as _, ToolSearch as _, DEFAULT_RESULTS as _, MAX_NAMESPACE_DESCRIPTION as _,
        MAX_QUERY_BYTES as _, MAX_QUERY_WORDS as _, OPENAI_TOOL_SEARCH as _, SEARCH_TOOL as _,
    };
    use toolbox::code::typescript::{
        declaration as _, declarations as _, render as _, MAX_TYPE_DEPTH as _, SHORTENED as _,
    };
    use toolbox::discover::{discovered as _, last_segment as _, Discovered as _};
    use toolbox::events::{ToolCallback as _, ToolFailure as _, ToolStart as _, ToolSuccess as _};
    use toolbox::names::{closest_names as _, is_valid_tool_name as _};
    use toolbox::prelude::{
        tool as _, tool_box as _, tool_fn as _, try_tool_fn as _, CallId as _, Context as _,
        DefinitionError as _, FnToolBox as _, FromContext as _, MultiToolBox as _, Registry as _,
        RegistryError as _, TimeoutToolBox as _, ToolBox as _, ToolBoxExt as _, ToolCall as _,
        ToolError as _, ToolErrorKind as _, ToolHandler as _, ToolResponse as _,
    };
    use toolbox::program::{
        hosted as _, Caller as _, Callers as _, ProgramState as _, ANTHROPIC_CODE_EXECUTION as _,
    };
    use toolbox::provider::{
        gemini_model_turn as _, hosted as _, lower as _, name_problem as _, request_limits as _,
        validate as _, validate_request as _, Answered as _, Dialect as _, LowerError as _,
        McpToolListings as _, Provider as _, ProviderError as _, RequestLimits as _,
        Violation as _, ANTHROPIC_CODE_EXECUTION as _, ANTHROPIC_INLINE_TOOLS_BETA as _,
        ANTHROPIC_STRICT_LIMITS as _, MAX_LOWERED_NODES as _, MAX_LOWERING_DEPTH as _,
        OPENAI_TOOL_SEARCH as _,
    };
    use toolbox::registry::{
        iso8601_utc as _, DiscoveredTool as _, HttpGetOptions as _, KeyRef as _,
        LiveResolution as _, RegisteredTool as _, Registry as _, RegistryError as _,
        ResolvedToolBox as _, ToolKey as _,
    };
    use toolbox::schema::{
        arguments_schema as _, check_arguments as _, empty_object_schema as _, output_schema as _,
    };
    use toolbox::testing::{
        assert_schema_snapshot as _, assert_surface_lock as _, check_discovered as _,
        check_surface as _, compare_surfaces as _, read_surface_lock as _, surface_lock_text as _,
        Compatibility as _, DiscoveredReport as _, HarnessOutcome as _, SurfaceChange as _,
        SurfaceReport as _, ToolHarness as _,
    };
    use toolbox::turn::{
        Approval as _, ApprovalRequest as _, BackgroundCalls as _, CallOutcome as _, Decision as _,
        PendingCall as _, TurnRunner as _, MAX_CALLS_PER_TURN as _,
    };
    use toolbox::{
        forward_calls as _, forward_listing as _, tool as _, tool_box as _, tool_fn as _,
        try_tool_fn as _, Args as _, Arguments as _, BoxError as _, BoxFuture as _, CallId as _,
        CancellationToken as _, Content as _, Context as _, DefinitionError as _,
        DispatchFuture as _, DispatchResult as _, EmbeddedResource as _, EmptyToolBox as _,
        Extension as _, FnToolBox as _, FromContext as _, MultiToolBox as _, NamedToolBox as _,
        Namespace as _, Registry as _, TaskSupport as _, ToolAnnotations as _, ToolBox as _,
        ToolBoxExt as _, ToolCall as _, ToolError as _, ToolErrorKind as _, ToolHandler as _,
        ToolResponse as _, ToolSpecification as _, ToolUi as _,
    };

    // The modules.
    use toolbox::args as _;
    use toolbox::boxes as _;
    use toolbox::catalog as _;
    use toolbox::code as _;
    use toolbox::code::typescript as _;
    use toolbox::discover as _;
    use toolbox::events as _;
    use toolbox::names as _;
    use toolbox::prelude as _;
    use toolbox::program as _;
    use toolbox::provider as _;
    use toolbox::registry as _;
    use toolbox::schema as _;
    use toolbox::testing as _;
    use toolbox::turn as _;
}

/// The paths only some features give, all of them on.
#[cfg(all(
    feature = "macros",
    feature = "registry",
    feature = "discovery",
    feature = "mcp",
    feature = "mcp-jwt",
    feature = "mcp-oauth",
    feature = "mcp-otel",
    feature = "mcp-task-redis",
    feature = "mcp-task-postgres",
    feature = "http-get",
    feature = "semantic",
    feature = "code-mode",
    feature = "async-openai",
    feature = "genai",
    feature = "rig"
))]
#[allow(unused_imports)]
mod every_feature {
    use toolbox::bridge::async_openai::{
        chat_calls as _, chat_messages as _, chat_tools as _, program_items as _,
        response_calls as _, response_items as _, response_tools as _, update_program_state as _,
    };
    use toolbox::bridge::genai::{call as _, calls as _, responses as _, tools as _};
    use toolbox::bridge::rig::{rig_kind as _, RigTools as _};
    use toolbox::bridge::BridgeError as _;
    use toolbox::catalog::semantic::{
        Embedder as _, Embeddings as _, HybridSearch as _, ModelError as _, SemanticIndex as _,
        DEFAULT_LEXICAL_WEIGHT as _, MAX_LEXICAL_WEIGHT as _,
    };
    use toolbox::code::{CodeMode as _, Limits as _, CODE_MODE_RUNTIME as _, RUN_CODE as _};
    use toolbox::mcp::apps::{UiResource as _, UI_EXTENSION as _, UI_MIME_TYPE as _};
    use toolbox::mcp::auth::{
        AuthorizeFuture as _, BearerAuth as _, HttpConnection as _, JwtVerifier as _,
        McpCaller as _, OAuth as _, Rejected as _, TokenVerifier as _, VerifyFuture as _,
    };
    use toolbox::mcp::client::{
        fingerprint as _, shown_url as _, system_message as _, Connected as _,
        FileTaskJournal as _, HttpConnection as _, JournaledTask as _, McpConnect as _,
        McpServers as _, McpToolBox as _, Pin as _, PinChangeKind as _, PinEvent as _,
        ProxyTools as _, RemoteServer as _, ServerFailure as _, ServerSummary as _,
        TaskJournal as _, Timeouts as _, INSTRUCTIONS_LIMIT as _,
    };
    use toolbox::mcp::server::store::{
        expired_outcome as _, now_ms as _, Claimed as _, Lease as _, MemoryTaskStore as _,
        PostgresTaskStore as _, RedisTaskStore as _, StoreResult as _, Swept as _,
        TaskOutcome as _, TaskProgress as _, TaskRecord as _, TaskState as _, TaskStore as _,
        TaskStoreError as _,
    };
    use toolbox::mcp::server::{
        serve_http as _, serve_http_with as _, serve_stdio as _, Claimed as _, Elicitation as _,
        HttpOptions as _, HttpServer as _, Lease as _, LogLevel as _, McpLog as _, McpMeta as _,
        McpPeer as _, McpProgress as _, McpServer as _, MemoryTaskStore as _,
        PostgresTaskStore as _, Progress as _, RedisTaskStore as _, Sample as _, StoreResult as _,
        Swept as _, TaskOutcome as _, TaskProgress as _, TaskRecord as _, TaskState as _,
        TaskStore as _, TaskStoreError as _,
    };
    use toolbox::mcp::{
        serve_http as _, serve_stdio as _, McpPeer as _, McpProgress as _, McpServer as _,
        McpServers as _, McpToolBox as _,
    };

    // The modules.
    use toolbox::bridge as _;
    use toolbox::bridge::async_openai as _;
    use toolbox::bridge::genai as _;
    use toolbox::bridge::rig as _;
    use toolbox::catalog::semantic as _;
    use toolbox::mcp as _;
    use toolbox::mcp::apps as _;
    use toolbox::mcp::auth as _;
    use toolbox::mcp::client as _;
    use toolbox::mcp::server as _;
    use toolbox::mcp::server::store as _;
}

/// The list above is the docs' whole list, not a sample: the contract's
/// names and each model-facing family are in it.
#[test]
fn the_list_names_every_family() {
    let text = include_str!("public_paths.rs");
    for path in [
        "use toolbox::{",
        "use toolbox::provider::{",
        "use toolbox::catalog::{",
        "use toolbox::turn::{",
        "use toolbox::code::{",
        "use toolbox::testing::{",
        "use toolbox::program::{",
        "use toolbox::prelude::{",
    ] {
        assert!(text.contains(path), "no `{path}` line");
    }
    let imported = text.matches(" as _").count();
    assert!(imported > 288, "{imported} paths");
}
