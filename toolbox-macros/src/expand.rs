//! Code generation: one argument struct per tool (deriving `Deserialize`
//! and `JsonSchema`, so the schema and the deserializer cannot disagree),
//! and one `ToolBox` impl per box routing names with a `match`. One path
//! serves impl blocks, inline modules and free functions.

use darling::util::Override;
use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned, ToTokens};
use syn::spanned::Spanned;
use syn::{Generics, Type};

use crate::ast::{Output, ParamKind, Tool};

/// What the generated impl is for and how it calls the tools.
pub(crate) struct BoxTarget {
    pub krate: TokenStream,
    pub self_ty: TokenStream,
    pub generics: Generics,
    pub name: String,
    pub description: Option<String>,
    /// `#[tool_box(defer)]`: every tool deferred.
    pub defer: bool,
    /// `#[tool_box(callers(..))]`: who may call the tools without their own.
    pub callers: Option<crate::attr::Callers>,
}

impl BoxTarget {
    /// The impl's generics, with `Self: Send + Sync` when it has any.
    pub(crate) fn impl_generics(&self) -> Generics {
        let mut generics = self.generics.clone();
        if !generics.params.is_empty() {
            let self_ty = &self.self_ty;
            generics
                .make_where_clause()
                .predicates
                .push(syn::parse_quote!(#self_ty: ::core::marker::Send + ::core::marker::Sync));
        }
        generics
    }
}

/// `::toolbox`, or the path given with `crate = …`.
pub(crate) fn krate(path: Option<&syn::Path>) -> TokenStream {
    match path {
        Some(path) => path.to_token_stream(),
        None => quote!(::toolbox),
    }
}

fn args_struct_ident(tool: &Tool) -> syn::Ident {
    format_ident!(
        "__toolbox_args_{}",
        tool.sig.ident.to_string().trim_start_matches("r#")
    )
}

/// A tool's arguments as the generated code reads them.
struct ArgsShape {
    /// The generated argument struct (none for `#[args]` / `Args<T>`).
    definition: TokenStream,
    /// The type the arguments deserialize into.
    ty: TokenStream,
    /// Every parameter's type is std's and has both traits
    /// ([`plain_argument`]): the struct is plain and read directly, with no
    /// bounds, lifetime or probes, which only keep a missing trait from
    /// being reported twice.
    plain: bool,
}

impl ArgsShape {
    /// The arguments' JSON Schema.
    fn parameters(&self, private: &TokenStream) -> TokenStream {
        let ty = &self.ty;
        if self.plain {
            quote!(#private::parameters::<#ty>())
        } else {
            quote!((&&#private::ArgsProbe::<#ty>::new()).__toolbox_parameters())
        }
    }

    /// The arguments read from `arguments`, or the error.
    fn read(&self, private: &TokenStream) -> TokenStream {
        let ty = &self.ty;
        if self.plain {
            quote!(arguments.deserialize_tool::<#ty>())
        } else {
            quote!((&&#private::ArgsProbe::<#ty>::new()).__toolbox_read(arguments))
        }
    }

    /// The arguments checked without running the tool.
    fn check(&self, private: &TokenStream) -> TokenStream {
        let ty = &self.ty;
        if self.plain {
            quote!(#private::check::<#ty>(arguments))
        } else {
            quote!((&&#private::ArgsProbe::<#ty>::new()).__toolbox_check(arguments))
        }
    }
}

/// std's scalars and `String`, by the names a tool's signature spells them
/// with: parameters of these types are read plainly ([`plain_argument`]),
/// results of these types converted without a guard ([`plain_output`]).
const STD_SCALARS: &[&str] = &[
    "bool", "char", "i8", "i16", "i32", "i64", "i128", "isize", "u8", "u16", "u32", "u64", "u128",
    "usize", "f32", "f64", "String",
];

/// Whether a parameter's type is spelled as one of std's scalars or
/// `String`, or an `Option`, `Vec` or `Box` of one: types with
/// `Deserialize` and `JsonSchema`, for which the one-error-per-trait shape
/// has nothing to catch. (A look-alike of the same name without them is
/// still an error, reported by the derives as well.)
fn plain_argument(ty: &Type) -> bool {
    const WRAPPERS: &[&str] = &["Option", "Vec", "Box"];
    let Type::Path(path) = ty else {
        return false;
    };
    if path.qself.is_some() {
        return false;
    }
    let segments = &path.path.segments;
    // `String`, or a path through std, core or alloc (`std::string::String`).
    let std_path = segments.len() == 1
        || segments.first().is_some_and(|first| {
            ["std", "core", "alloc"]
                .iter()
                .any(|root| first.ident == root)
        });
    let Some(last) = segments.last() else {
        return false;
    };
    if !std_path {
        return false;
    }
    match &last.arguments {
        syn::PathArguments::None => STD_SCALARS.iter().any(|name| last.ident == name),
        syn::PathArguments::AngleBracketed(inner) => {
            WRAPPERS.iter().any(|name| last.ident == name)
                && inner.args.len() == 1
                && matches!(inner.args.first(), Some(syn::GenericArgument::Type(inner)) if plain_argument(inner))
        }
        syn::PathArguments::Parenthesized(_) => false,
    }
}

/// The generated argument struct (or none for `#[args]` / `Args<T>`), and
/// how the arguments are read.
fn args_struct(tool: &Tool, krate: &TokenStream) -> ArgsShape {
    if let Some((param, wrapped)) = tool.params.iter().find_map(|p| match &p.kind {
        ParamKind::Whole { wrapped } => Some((p, wrapped)),
        _ => None,
    }) {
        let ty = wrapped.as_ref().unwrap_or(&param.ty);
        return ArgsShape {
            definition: TokenStream::new(),
            ty: quote_spanned!(ty.span()=> #ty),
            plain: false,
        };
    }
    let ident = args_struct_ident(tool);
    let serde_path = format!("{krate}::serde").replace(' ', "");
    let schemars_path = format!("{krate}::schemars").replace(' ', "");
    let mut fields = Vec::new();
    let mut defaults = Vec::new();
    let mut bounds = Vec::new();
    let mut schema_bounds = Vec::new();
    for param in &tool.params {
        let ParamKind::Arg {
            rename,
            description,
            default,
        } = &param.kind
        else {
            continue;
        };
        let field = &param.ident;
        let ty = &param.ty;
        let mut attrs = Vec::new();
        if let Some(description) = description {
            attrs.push(quote!(#[schemars(description = #description)]));
        }
        if let Some(rename) = rename {
            attrs.push(quote!(#[serde(rename = #rename)]));
        }
        match default {
            Some(Override::Inherit) => attrs.push(quote!(#[serde(default)])),
            Some(Override::Explicit(expr)) => {
                let expr = &expr.0;
                // Length-prefixed, so `a_b` + `c` and `a` + `b_c` differ.
                let tool_name = tool.sig.ident.to_string();
                let tool_name = tool_name.trim_start_matches("r#");
                let function = format_ident!(
                    "__toolbox_default_{}_{}_{}",
                    tool_name.len(),
                    tool_name,
                    field.to_string().trim_start_matches("r#")
                );
                let path = function.to_string();
                defaults.push(quote! {
                    #[allow(non_snake_case)]
                    fn #function() -> #ty { #expr }
                });
                attrs.push(quote!(#[serde(default = #path)]));
            }
            None => {}
        }
        // std's types have both traits: a bound on them checks nothing.
        if !plain_argument(ty) {
            bounds.push(format!("{}: {serde_path}::Deserialize<'de>", quote!(#ty)));
            schema_bounds.push(format!(
                "for<'__toolbox_b> {}: {schemars_path}::JsonSchema",
                quote!(#ty)
            ));
        }
        fields.push(respan(quote!(#(#attrs)* #field: #ty), Span::call_site()));
    }
    // Each parameter type's `Deserialize` and `JsonSchema` are bounds of
    // the derived impls: where a type lacks one, that impl does not apply
    // and its body is not checked, so the missing impl is reported once,
    // at the parameter, in our words (`assert_argument`,
    // `assert_argument_schema`), not again inside the derives' code, and
    // the generated calls reach the struct through `ArgsProbe`, which says
    // nothing more. schemars takes bounds only on a generic type, hence
    // the lifetime; a bound naming no parameter of the impl must be
    // higher-ranked to be allowed, hence `for<'_>`.
    let plain = tool.params.iter().all(|param| match &param.kind {
        ParamKind::Arg { .. } => plain_argument(&param.ty),
        _ => true,
    });
    if plain {
        let definition = quote! {
            #(#defaults)*
            #[derive(#krate::serde::Deserialize, #krate::schemars::JsonSchema)]
            #[serde(crate = #serde_path, deny_unknown_fields)]
            #[schemars(crate = #schemars_path)]
            #[allow(non_camel_case_types, dead_code)]
            struct #ident {
                #(#fields,)*
            }
        };
        return ArgsShape {
            definition,
            ty: quote!(#ident),
            plain,
        };
    }
    let bounds = bounds.join(", ");
    let schema_bounds = schema_bounds.join(", ");
    let definition = quote! {
        #(#defaults)*
        #[derive(#krate::serde::Deserialize, #krate::schemars::JsonSchema)]
        #[serde(crate = #serde_path, deny_unknown_fields, bound(deserialize = #bounds))]
        #[schemars(crate = #schemars_path, bound = #schema_bounds)]
        #[allow(non_camel_case_types, dead_code)]
        struct #ident<'__toolbox> {
            #(#fields,)*
            #[serde(skip)]
            __toolbox_lifetime: ::core::marker::PhantomData<&'__toolbox ()>,
        }
    };
    ArgsShape {
        definition,
        ty: quote!(#ident<'static>),
        plain,
    }
}

/// The type a tool's result is described by: the value, or the ok type of
/// a `Result` (no schema for `()`, `impl Trait` or a `ToolResponse`).
fn output_type(tool: &Tool) -> Option<&Type> {
    match &tool.output {
        Output::Value(ty) | Output::Result(ty) => Some(ty),
        Output::Unit | Output::Opaque => None,
    }
}

fn specification(
    tool: &Tool,
    args: &ArgsShape,
    krate: &TokenStream,
    box_defer: bool,
    box_callers: Option<crate::attr::Callers>,
) -> TokenStream {
    let name = &tool.name;
    let description = tool.description.clone().unwrap_or_default();
    let title = match &tool.args.title {
        Some(title) => quote!(::core::option::Option::Some(#title)),
        None => quote!(::core::option::Option::None),
    };
    let flag = |flag: &darling::util::Flag| {
        if flag.is_present() {
            quote!(::core::option::Option::Some(true))
        } else {
            quote!(::core::option::Option::None)
        }
    };
    let (read_only, destructive, idempotent, open_world) = (
        flag(&tool.args.read_only),
        flag(&tool.args.destructive),
        flag(&tool.args.idempotent),
        flag(&tool.args.open_world),
    );
    // A parameter without a schema is reported by the type checks, on the
    // parameter: the probe says nothing more.
    let parameters = args.parameters(&quote!(#krate::macro_support));
    let output = match output_type(tool) {
        Some(ty) => quote! {
            (&&#krate::macro_support::SchemaProbe::<#ty>::new()).__toolbox_output_schema()
        },
        None => quote!(::core::option::Option::None),
    };
    let specification = quote! {
        #krate::macro_support::specification(
            #name,
            #title,
            #description,
            #parameters,
            #output,
            #read_only,
            #destructive,
            #idempotent,
            #open_world,
        )
    };
    let specification = match &tool.args.ui {
        Some(uri) => {
            let app_only = tool.args.app_only.is_present();
            quote!(#krate::macro_support::with_ui(#specification, #uri, #app_only))
        }
        None => specification,
    };
    let specification = match tool.args.task {
        Some(crate::attr::Task { required, .. }) => {
            quote!(#krate::macro_support::with_task(#specification, #required))
        }
        None => specification,
    };
    let specification = match tool.args.callers.or(box_callers) {
        Some(crate::attr::Callers { direct, code }) => {
            quote!(#krate::macro_support::with_callers(#specification, #direct, #code))
        }
        None => specification,
    };
    let defer = box_defer || tool.args.defer.is_present();
    if !defer && tool.args.example.is_empty() {
        return specification;
    }
    let examples = tool.args.example.iter().map(|example| match example {
        crate::attr::Example::Text(text) => quote!(#krate::macro_support::example_text(#text)),
        crate::attr::Example::Expr(expr) => {
            quote_spanned!(expr.span()=> #krate::macro_support::example_value(#expr))
        }
    });
    quote! {
        #krate::macro_support::with_extras(#specification, #defer, ::std::vec![#(#examples),*])
    }
}

/// One spanned bound check per argument and output type, so the error a
/// user reads names the parameter (or the return type), not the macro.
fn type_checks(tool: &Tool, krate: &TokenStream) -> TokenStream {
    let private = quote!(#krate::macro_support);
    let mut checks = Vec::new();
    for param in &tool.params {
        let ty = match &param.kind {
            // std's types have both traits: nothing to assert.
            ParamKind::Arg { .. } if plain_argument(&param.ty) => continue,
            ParamKind::Arg { .. } | ParamKind::Whole { wrapped: None } => &param.ty,
            ParamKind::Whole {
                wrapped: Some(inner),
            } => inner,
            _ => continue,
        };
        checks.push(quote_spanned! {ty.span()=>
            #private::assert_argument::<#ty>();
            #private::assert_argument_schema::<#ty>();
        });
    }
    if let Some(ty) = output_type(tool) {
        checks.push(quote_spanned! {ty.span()=> #private::assert_output::<#ty>(); });
    }
    quote!(#(#checks)*)
}

/// The `match` arm that runs one tool.
fn dispatch_arm(tool: &Tool, args: &ArgsShape, krate: &TokenStream) -> TokenStream {
    let private = quote!(#krate::macro_support);
    let span = Span::call_site();
    let read = respan(args.read(&private), span);
    let name = &tool.name;
    let mut prepare = Vec::new();
    let mut call_args = Vec::new();
    for (index, param) in tool.params.iter().enumerate() {
        let ty = &param.ty;
        match &param.kind {
            ParamKind::Arg { .. } => {
                let field = respan(param.ident.to_token_stream(), span);
                call_args.push(quote!(__args.#field));
            }
            ParamKind::Whole { wrapped: Some(_) } => call_args.push(
                quote_spanned! {ty.span()=> <#ty as #private::WholeArguments<_>>::wrap(__args) },
            ),
            ParamKind::Whole { wrapped: None } => call_args.push(quote!(__args)),
            ParamKind::Context { by_ref } => {
                let referent = match ty {
                    Type::Reference(reference) if *by_ref => &*reference.elem,
                    ty => ty,
                };
                call_args.push(if *by_ref {
                    quote_spanned! {referent.span()=> <#referent as #private::IsContext>::borrowed(ctx) }
                } else {
                    quote_spanned! {referent.span()=> <#referent as #private::IsContext>::owned(ctx) }
                });
            }
            ParamKind::Inject => {
                let local = format_ident!("__inject_{}", index);
                let extract = quote_spanned! {ty.span()=>
                    <#ty as #private::FromContext>::from_context(ctx)
                };
                prepare.push(quote! {
                    let #local = #extract?;
                });
                call_args.push(quote!(#local));
            }
        }
    }
    let function = respan(tool.sig.ident.to_token_stream(), span);
    let call = if tool.has_receiver() {
        quote!(self.#function(#(#call_args),*))
    } else if tool.site == crate::ast::Site::Method {
        quote!(Self::#function(#(#call_args),*))
    } else {
        quote!(#function(#(#call_args),*))
    };
    // A sync tool whose result is not a std scalar or string by its
    // spelling runs under one guard, its conversion included; the others
    // guard the tool's code and convert with the guard their type needs.
    let whole = tool.sig.asyncness.is_none() && !plain_output(&tool.output);
    let respond = |value: TokenStream| {
        if whole {
            quote!((&&&#private::OutputWrap::new(#value)).__toolbox_respond_unguarded())
        } else {
            quote!((&&&#private::OutputWrap::new(#value)).__toolbox_respond())
        }
    };
    let convert = match &tool.output {
        Output::Unit | Output::Value(_) => respond(quote!(__out)),
        // No type to check ahead: `Serialize` is required right here.
        Output::Opaque if whole => quote!(#private::output_unguarded(__out)),
        Output::Opaque => quote!(#private::output(__out)),
        Output::Result(_) => {
            let ok = respond(quote!(value));
            quote! {
                match __out {
                    ::core::result::Result::Ok(value) => #ok,
                    ::core::result::Result::Err(error) => ::core::result::Result::Err(
                        (&&&#private::ErrorWrap::new(error)).__toolbox_into_error()
                    ),
                }
            }
        }
    };
    let run = if tool.sig.asyncness.is_some() {
        let body = quote!(async move {
            let __out = __call.await;
            #convert
        });
        match &tool.args.timeout {
            Some(timeout) => {
                let ms = timeout.millis;
                quote!(#private::DispatchFuture::new(#private::time_limited(#private::millis(#ms), #body)))
            }
            None => quote!(#private::DispatchFuture::new(#body)),
        }
    } else {
        quote!({
            let __out = __call;
            #private::DispatchFuture::ready(#convert)
        })
    };
    // The tool's own code (its argument types' deserializers, injected
    // parameters, its body) runs with panics caught, so dispatch never
    // unwinds (`catches_panics`); the result's conversion catches its own.
    if whole {
        return quote! {
            #name => #private::DispatchFuture::ready(#private::guarded(|| {
                let __args = #read?;
                #(#prepare)*
                let __out = #call;
                #convert
            })),
        };
    }
    quote! {
        #name => {
            let __call = match #private::guarded(|| {
                let __args = #read?;
                #(#prepare)*
                ::core::result::Result::Ok(#call)
            }) {
                ::core::result::Result::Ok(call) => call,
                ::core::result::Result::Err(error) => {
                    return #private::DispatchFuture::ready(::core::result::Result::Err(error))
                }
            };
            #run
        }
    }
}

/// Whether a result type is spelled as one of std's scalars or strings,
/// whose conversion cannot panic (the type still decides, through
/// `PlainOutput`: a look-alike is converted with a guard).
fn plain_output(output: &Output) -> bool {
    let plain = |ty: &Type| match ty {
        Type::Path(path) if path.qself.is_none() => path.path.segments.last().is_some_and(|last| {
            last.arguments.is_none() && STD_SCALARS.iter().any(|name| last.ident == name)
        }),
        Type::Reference(reference) => {
            matches!(&*reference.elem, Type::Path(path) if path.path.is_ident("str"))
        }
        Type::Tuple(tuple) => tuple.elems.is_empty(),
        _ => false,
    };
    match output {
        Output::Unit => true,
        Output::Value(ty) | Output::Result(ty) => plain(ty),
        Output::Opaque => false,
    }
}

/// The generated items for one box: argument structs, the `ToolBox` and
/// `NamedToolBox` impls, inside one `const _` block.
pub(crate) fn generate(target: &BoxTarget, tools: &[Tool]) -> TokenStream {
    let krate = &target.krate;
    let private = quote!(#krate::macro_support);
    let self_ty = &target.self_ty;
    let generics = target.impl_generics();
    let (impl_generics, _, where_clause) = generics.split_for_impl();
    let mut structs = Vec::new();
    let mut specs = Vec::new();
    let mut arms = Vec::new();
    let mut check_arms = Vec::new();
    // The type checks keep the spans of the user's types: their errors are
    // the ones a user reads, on the parameter or the return type.
    let checks: Vec<TokenStream> = tools.iter().map(|tool| type_checks(tool, krate)).collect();
    // The rest is spanned at the attribute (`respan`), but for what
    // reports an error in the user's terms (an injected or foreign
    // parameter, a default's expression).
    let span = Span::call_site();
    for tool in tools {
        let args = args_struct(tool, krate);
        specs.push(respan(
            specification(tool, &args, krate, target.defer, target.callers),
            span,
        ));
        arms.push(dispatch_arm(tool, &args, krate));
        let name = &tool.name;
        let check = args.check(&private);
        check_arms.push(respan(quote!(#name => #check,), span));
        structs.push(args.definition);
    }
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    let box_name = &target.name;
    let box_description = match &target.description {
        Some(text) => quote!(::core::option::Option::Some(#text)),
        None => quote!(::core::option::Option::None),
    };
    // Non-generic boxes build their specifications once; a generic impl's
    // may depend on its parameters, so they are built per call.
    let (cache, list, one) = if target.generics.params.is_empty() {
        (
            quote! {
                fn __toolbox_specifications() -> &'static [#private::ToolSpecification] {
                    static SPECIFICATIONS: ::std::sync::OnceLock<::std::vec::Vec<#private::ToolSpecification>> =
                        ::std::sync::OnceLock::new();
                    SPECIFICATIONS.get_or_init(|| ::std::vec![#(#specs),*])
                }
            },
            quote!(__toolbox_specifications().to_vec()),
            quote!(__toolbox_specifications()
                .iter()
                .find(|s| s.name == name)
                .map(::std::borrow::Cow::Borrowed)),
        )
    } else {
        (
            TokenStream::new(),
            quote!(::std::vec![#(#specs),*]),
            quote!(self
                .specifications(_ctx)
                .into_iter()
                .find(|s| s.name == name)
                .map(::std::borrow::Cow::Owned)),
        )
    };
    quote_spanned! {span=>
        #[allow(unused_qualifications, non_snake_case)]
        const _: () = {
            #[allow(unused_imports)]
            use #private::{
                ErrViaBoxError as _, ErrViaDisplay as _, ErrViaToolError as _, SchemaViaJsonSchema as _,
                SchemaViaNothing as _, RespondViaResponse as _, RespondViaPlain as _, RespondViaSerialize as _,
                RespondViaNothing as _, ArgsViaTraits as _, ArgsViaNothing as _,
            };

            fn __toolbox_type_checks() {
                #(#checks)*
            }

            #(#structs)*

            #cache

            #[automatically_derived]
            impl #impl_generics #private::ToolBox for #self_ty #where_clause {
                fn specifications(&self, _ctx: &#private::Context) -> ::std::vec::Vec<#private::ToolSpecification> {
                    #list
                }

                fn specification(
                    &self,
                    name: &str,
                    _ctx: &#private::Context,
                ) -> ::core::option::Option<::std::borrow::Cow<'_, #private::ToolSpecification>> {
                    #one
                }

                fn contains(&self, name: &str, _ctx: &#private::Context) -> bool {
                    ::core::matches!(name, #(#names)|*)
                }

                fn check(
                    &self,
                    name: &str,
                    arguments: #private::Arguments<'_>,
                    _ctx: &#private::Context,
                ) -> ::core::result::Result<(), #private::ToolError> {
                    match name {
                        #(#check_arms)*
                        _ => #private::unknown_error(name, &[#(#names),*]),
                    }
                }

                fn catches_panics(&self) -> bool {
                    true
                }

                fn dispatch<'a>(
                    &'a self,
                    name: &'a str,
                    arguments: #private::Arguments<'a>,
                    ctx: &'a #private::Context,
                ) -> #private::DispatchFuture<'a> {
                    let _ = (ctx, arguments);
                    match name {
                        #(#arms)*
                        _ => #private::DispatchFuture::ready(#private::unknown(name, &[#(#names),*])),
                    }
                }
            }

            #[automatically_derived]
            impl #impl_generics #private::NamedToolBox for #self_ty #where_clause {
                fn box_name(&self) -> &str {
                    #box_name
                }

                fn box_description(&self) -> ::core::option::Option<&str> {
                    #box_description
                }
            }
        };
    }
}

/// `tokens` with every token, delimiters included, spanned at `span`.
///
/// The generated code is spanned at the attribute where no error of the
/// user's is reported from it. A token spanned in a method's text moves
/// whenever any text before it changes length, and each move makes the
/// incremental compiler check and build again every item holding one: all
/// the tools' generated code, for an edit in the first tool's body. The
/// attribute's place moves only with edits above it.
fn respan(tokens: TokenStream, span: Span) -> TokenStream {
    use proc_macro2::{Group, TokenTree};
    tokens
        .into_iter()
        .map(|token| match token {
            TokenTree::Group(group) => {
                let mut respanned = Group::new(group.delimiter(), respan(group.stream(), span));
                respanned.set_span(span);
                TokenTree::Group(respanned)
            }
            mut other => {
                other.set_span(span);
                other
            }
        })
        .collect()
}
