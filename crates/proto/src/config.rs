//! The shape every one-to-many protocol's role configurations share, declared once:
//! [`sender_config!`] writes a group sender's configuration (its [`SenderIdentity`] as the
//! `id` field, read through as `cfg.node`, `cfg.session`, …; the send-queue limit; a
//! constructor from the identity) and [`receiver_config!`] a receiver's (its node id, its
//! session, a constructor from the node id). A protocol's module lists only its own fields,
//! each with its default (or the constructor argument it is set from).
//!
//! [`SenderIdentity`]: crate::roster::SenderIdentity

/// How many messages a group sender's [`Agent::send`](crate::Agent::send) queues beyond those
/// it is sending before it reports `Full`, unless its configuration says otherwise.
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
            /// Messages [`Agent::send`](crate::Agent::send) queues (beyond those it is
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

/// Declares a receiver's configuration `$name`: the doc given, `#[derive(Debug, Clone)]`, the
/// fields `node` and `session`, then the fields listed (`pub field: Type = value,` — `value`
/// may name an argument of `new`); and `new(node, args…)` setting each field to its value and
/// the session to 0.
macro_rules! receiver_config {
    (
        $(#[$meta:meta])*
        pub struct $name:ident {
            $( $(#[$field_meta:meta])* pub $field:ident: $ty:ty = $value:expr, )*
        }
        pub fn new($($arg:ident: $arg_ty:ty),* $(,)?);
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone)]
        pub struct $name {
            /// This agent's node id (the source of every datagram it sends).
            pub node: $crate::NodeId,
            /// Session id: carried in every datagram, and datagrams of another session are
            /// ignored.
            pub session: u32,
            $( $(#[$field_meta])* pub $field: $ty, )*
        }

        impl $name {
            /// The defaults for the given identity (see `rmcast_proto::spec`); every other
            /// field may be changed before building.
            pub fn new(node: $crate::NodeId, $($arg: $arg_ty),*) -> Self {
                $name {
                    node,
                    session: 0,
                    $($field: $value,)*
                }
            }
        }
    };
}
pub(crate) use receiver_config;
