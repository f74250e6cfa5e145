//! `Args<T>`: the whole argument object as one parameter.

/// The whole argument object as one type: a tool parameter of type
/// `Args<T>` (or marked `#[args]`) receives every argument, and `T`'s schema
/// is the tool's.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Args<T>(pub T);

impl<T> std::ops::Deref for Args<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}
