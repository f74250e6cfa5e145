//! What the macros emit when they report errors: the user's item, and a
//! stand-in `ToolBox` impl (with the `{Name}Tool` type or the module's
//! `Tools` where those would exist), so the rest of the program still
//! type-checks and only the real error shows, not a second "`W: ToolBox`
//! is not satisfied" at every use of the box.

use proc_macro2::TokenStream;
use quote::quote;

use crate::expand::BoxTarget;

/// A box that offers no tools and answers every call as unknown.
pub(crate) fn stand_in(target: &BoxTarget) -> TokenStream {
    let krate = &target.krate;
    let private = quote!(#krate::macro_support);
    let self_ty = &target.self_ty;
    let generics = target.impl_generics();
    let (impl_generics, _, where_clause) = generics.split_for_impl();
    let name = &target.name;
    quote! {
        #[allow(unused_qualifications)]
        const _: () = {
            #[automatically_derived]
            impl #impl_generics #private::ToolBox for #self_ty #where_clause {
                fn specifications(&self, _: &#private::Context) -> ::std::vec::Vec<#private::ToolSpecification> {
                    ::std::vec::Vec::new()
                }

                fn dispatch<'a>(
                    &'a self,
                    name: &'a str,
                    _: #private::Arguments<'a>,
                    _: &'a #private::Context,
                ) -> #private::DispatchFuture<'a> {
                    #private::DispatchFuture::ready(#private::unknown(name, &[]))
                }
            }

            #[automatically_derived]
            impl #impl_generics #private::NamedToolBox for #self_ty #where_clause {
                fn box_name(&self) -> &str {
                    #name
                }
            }
        };
    }
}
