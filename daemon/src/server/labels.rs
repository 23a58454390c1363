//! Conversions for the Tags and Bookmarks RPCs (the engine's
//! `engine::labels` does the work).

use fsindex_proto::v1 as pb;

use super::convert::entry_type;
use crate::Error;
use crate::engine::{Bookmark, Engine, TagTotal, Tagged, View};
use crate::store::labels::TagSource;

pub(super) fn source(s: TagSource) -> i32 {
    (match s {
        TagSource::User => pb::TagSource::User,
        TagSource::Xattr if crate::platform::tags::FINDER => pb::TagSource::Finder,
        TagSource::Xattr => pb::TagSource::Xattr,
    }) as i32
}

fn tagged(t: Tagged) -> pb::TagsResponse {
    pb::TagsResponse {
        path: t.path,
        r#type: entry_type(t.kind),
        tags: t
            .tags
            .into_iter()
            .map(|(name, s)| pb::Tag {
                name,
                source: source(s),
                entries: 1,
            })
            .collect(),
    }
}

fn total(t: TagTotal) -> pb::Tag {
    pb::Tag {
        name: t.name,
        source: source(t.source),
        entries: t.entries,
    }
}

/// One Tags call.
pub(super) fn tags(
    e: &Engine,
    action: pb::TagsAction,
    req: pb::TagsRequest,
    view: Option<View>,
) -> Result<pb::TagsResponse, Error> {
    let need_path = || {
        if req.path.is_empty() {
            Err(Error::InvalidArgument(
                "give the path of the entry to tag".into(),
            ))
        } else {
            Ok(())
        }
    };
    match action {
        pb::TagsAction::Add => {
            need_path()?;
            e.tag(&req.path, &req.tags, &[], view).map(tagged)
        }
        pb::TagsAction::Remove => {
            need_path()?;
            e.tag(&req.path, &[], &req.tags, view).map(tagged)
        }
        _ if req.path.is_empty() => Ok(pb::TagsResponse {
            tags: e.tag_totals(view)?.into_iter().map(total).collect(),
            ..Default::default()
        }),
        _ => e.tags_of(&req.path, view).map(tagged),
    }
}

pub(super) fn bookmark(b: Bookmark) -> pb::Bookmark {
    pb::Bookmark {
        name: b.name,
        path: b.path,
        r#type: entry_type(b.kind),
        added_unix: b.added_at,
    }
}
