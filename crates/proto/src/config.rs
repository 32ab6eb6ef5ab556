//! The shape every one-to-many protocol's role configurations share, declared once:
//! [`sender_config!`] writes a group sender's configuration (its [`SenderIdentity`] as the
//! `id` field, read through as `cfg.node`, `cfg.session`, …; the send-queue limit; a
//! constructor from the identity) and [`receiver_config!`] a receiver's (its node id, its
//! session, a constructor from the node id), [`group_config!`] that of a role serving a
//! group without a receiver set (a `pgm` or `lms` source, a router agent: node, group,
//! session). A protocol's module lists only its own fields, each with its default (or the
//! constructor argument it is set from) — or, for a family laid out by
//! [`deploy`](crate::deploy), each with the value its typed parameters give.
//!
//! [`SenderIdentity`]: crate::roster::SenderIdentity

/// How many messages a group sender's [`SenderAgent::send`](crate::SenderAgent::send) queues beyond
/// those it is sending before it reports `Full`, unless its configuration says otherwise.
pub(crate) const QUEUE_LIMIT: usize = 64;

/// Declares a group sender's configuration `$name`: the doc and attributes given, `#[derive(Debug,
/// Clone)]`, the field `id: SenderIdentity` (read through by
/// [`embeds_sender_identity!`](crate::roster::embeds_sender_identity)), the fields listed
/// (`pub field: Type = value,` — `value` may name an argument of `new`), and `queue_limit`;
/// and `new(node, group, receivers, args…)` setting each field to its value, the session to
/// 0 and the queue limit to [`QUEUE_LIMIT`].
macro_rules! sender_config {
    (
        $(#[$meta:meta])*
        pub struct $name:ident {
            $( $(#[$field_meta:meta])* pub $field:ident: $ty:ty = $value:expr, )*
        }
        $(#[$new_meta:meta])*
        pub fn new($($arg:ident: $arg_ty:ty),* $(,)?);
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone)]
        pub struct $name {
            /// Who the sender is and whom it serves; its fields read as `cfg.node`,
            /// `cfg.session`, `cfg.group` and `cfg.receivers`.
            pub id: $crate::roster::SenderIdentity,
            $( $(#[$field_meta])* pub $field: $ty, )*
            /// Messages [`SenderAgent::send`](crate::SenderAgent::send) queues (beyond those it is
            /// sending) before it reports `Full`.
            pub queue_limit: usize,
        }

        $crate::roster::embeds_sender_identity!($name);

        impl $name {
            $(#[$new_meta])*
            pub fn new(
                node: $crate::NodeId,
                group: $crate::GroupId,
                receivers: Vec<$crate::NodeId>,
                $($arg: $arg_ty),*
            ) -> Self {
                $name {
                    id: $crate::roster::SenderIdentity::new(node, group, receivers),
                    $($field: $value,)*
                    queue_limit: $crate::config::QUEUE_LIMIT,
                }
            }
        }
    };
}
pub(crate) use sender_config;

/// Declares a role's configuration `$name` (the internals of [`receiver_config!`] and
/// [`group_config!`]): the doc and attributes given, `#[derive(Debug, Clone)]`, the
/// `identity` fields (each set from the constructor argument of its name), the session (0),
/// then the fields listed (`pub field: Type = value,`). Its constructor `new(identity…,
/// args…)` either sets each field to its value (`value` may name an argument of `new`), or,
/// with `from p: Params`, takes the values from the family's typed parameters: `new` is the
/// configuration [`Params::default`](Default::default) gives, and the impl of
/// [`FromParams`](crate::deploy::FromParams)`<Params, (identity…, args…)>` (what
/// [`Deployment::lay_out`](crate::deploy::Deployment::lay_out) builds roles with) sets each
/// field to its value, which may name `p` and the arguments.
macro_rules! role_config {
    (
        identity { $( $(#[$id_meta:meta])* $id:ident: $id_ty:ty, )* }
        $(#[$meta:meta])*
        pub struct $name:ident {
            $( $(#[$field_meta:meta])* pub $field:ident: $ty:ty = $value:expr, )*
        }
        $(#[$new_meta:meta])*
        pub fn new($($arg:ident: $arg_ty:ty),* $(,)?) $(from $p:ident: $params:ty)?;
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone)]
        pub struct $name {
            $( $(#[$id_meta])* pub $id: $id_ty, )*
            /// Session id: carried in every datagram, and datagrams of another session are
            /// ignored.
            pub session: u32,
            $( $(#[$field_meta])* pub $field: $ty, )*
        }

        $crate::config::role_config!(@new $name [$(#[$new_meta])*] [$($id: $id_ty,)*]
            ($($arg: $arg_ty,)*) { $($field: $value,)* } $(from $p: $params)?);
    };
    // `new` sets the fields to their values.
    (@new $name:ident [$(#[$new_meta:meta])*] [$($id:ident: $id_ty:ty,)*]
        ($($arg:ident: $arg_ty:ty,)*) { $($field:ident: $value:expr,)* }
    ) => {
        impl $name {
            /// The defaults for the given identity (see `rmcast_proto::spec`); every other
            /// field may be changed before building.
            $(#[$new_meta])*
            pub fn new($($id: $id_ty,)* $($arg: $arg_ty),*) -> Self {
                $name { $($id,)* session: 0, $($field: $value,)* }
            }
        }
    };
    // `new` is what the default parameters give; `from_params` sets the fields.
    (@new $name:ident [$(#[$new_meta:meta])*] [$($id:ident: $id_ty:ty,)*]
        ($($arg:ident: $arg_ty:ty,)*) { $($field:ident: $value:expr,)* }
        from $p:ident: $params:ty
    ) => {
        impl $name {
            /// The defaults for the given identity (the family's typed parameters'
            /// `Default`: the spec's defaults); every other field may be changed before
            /// building.
            $(#[$new_meta])*
            pub fn new($($id: $id_ty,)* $($arg: $arg_ty),*) -> Self {
                <Self as $crate::deploy::FromParams<$params, ($($id_ty,)* $($arg_ty,)*)>>::from_params(
                    &<$params as Default>::default(),
                    ($($id,)* $($arg,)*),
                )
            }
        }

        impl $crate::deploy::FromParams<$params, ($($id_ty,)* $($arg_ty,)*)> for $name {
            fn from_params(
                $p: &$params,
                ($($id,)* $($arg,)*): ($($id_ty,)* $($arg_ty,)*),
            ) -> Self {
                $name { $($id,)* session: 0, $($field: $value,)* }
            }
        }
    };
}
pub(crate) use role_config;

/// Declares a receiver's configuration `$name` ([`role_config!`] with the identity `node`):
/// the fields `node` and `session`, then the fields listed; `new(node, args…)` (see there for
/// the form `new(args…) from p: Params`, values from the family's typed parameters).
macro_rules! receiver_config {
    ($($body:tt)*) => {
        $crate::config::role_config! {
            identity {
                /// This agent's node id (the source of every datagram it sends).
                node: $crate::NodeId,
            }
            $($body)*
        }
    };
}
pub(crate) use receiver_config;

/// Declares the configuration `$name` of a role that serves a multicast group
/// ([`role_config!`] with the identity `node`, `group`): a one-to-many source without a
/// receiver set, or a router agent; `new(node, group, args…)`.
macro_rules! group_config {
    ($($body:tt)*) => {
        $crate::config::role_config! {
            identity {
                /// This agent's node id (the source of every datagram it sends).
                node: $crate::NodeId,
                /// The multicast group the data goes to.
                group: $crate::GroupId,
            }
            $($body)*
        }
    };
}
pub(crate) use group_config;

/// Packets of receive window beyond the next expected one a receiver of the families without
/// flow control (`pgm`, `lms`, `srm`) holds by default.
pub(crate) const RECEIVE_WINDOW: usize = 1 << 16;
