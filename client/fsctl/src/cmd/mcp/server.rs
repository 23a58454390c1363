//! The MCP surface: one thin method per tool (name, title, description,
//! annotations, schemas), each handing its arguments to the module that
//! does the work and its answer back as structured content plus text; and
//! what every call goes through first: arguments held to the tool's plain
//! schema (`schema`), MCP Roots narrowing the allowed directories
//! (`roots`), and the notices added to each answer.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use rmcp::handler::server::common::schema_for_output;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::tool::ToolCallContext;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, CustomRequest,
    CustomResult, ErrorData, ProtocolVersion,
};
use rmcp::service::{NotificationContext, RequestContext};
use rmcp::{RoleServer, ServerHandler, tool, tool_handler, tool_router};

use super::browse::{self, *};
use super::find::{self, *};
use super::index::{Ctx, add_notices, finish, with_notices};
use super::labels::{self, *};
use super::organise::{self, ApplyAnswer, ApplyParams, UndoParams};
use super::plan::{self, PlanAnswer, PlanParams};
use super::projects::{self, ProjectsAnswer, ProjectsParams};
use super::roots::Roots;
use super::schema;
use super::searches::{self, ListSavedParams, SavedAnswer};

/// The tools that change files, served only with `--allow-write`.
pub const WRITE_TOOLS: [&str; 2] = ["apply_move_plan", "undo_move_plan"];

#[derive(Clone)]
pub struct FsIndexServer {
    ctx: Arc<Ctx>,
    tools: Arc<ToolRouter<FsIndexServer>>,
    roots: Arc<Roots>,
}

impl FsIndexServer {
    pub fn new(
        ctx: Ctx,
        bound: Vec<PathBuf>,
        home: Option<PathBuf>,
        allow_write: bool,
    ) -> FsIndexServer {
        let mut tools = Self::tool_router();
        if !allow_write {
            // Not listed, and unknown when called: the server stays read-only.
            for name in WRITE_TOOLS {
                tools.map.remove(name);
            }
        }
        for route in tools.map.values_mut() {
            route.attr.input_schema = Arc::new(schema::plain_input(&route.attr.input_schema));
            if let Some(o) = &route.attr.output_schema {
                route.attr.output_schema = Some(Arc::new(schema::plain_output(o)));
            }
        }
        FsIndexServer {
            ctx: Arc::new(ctx),
            tools: Arc::new(tools),
            roots: Arc::new(Roots::new(bound, home)),
        }
    }
}

#[tool_router]
impl FsIndexServer {
    #[tool(
        title = "List allowed directories",
        description = "The directories this server may read; every path given to a tool must be at or under one.",
        annotations(read_only_hint = true, open_world_hint = false),
        output_schema = schema_for_output::<AllowedDirectories>()
    )]
    async fn list_allowed_directories(&self) -> CallToolResult {
        finish(browse::list_allowed_directories(&self.ctx))
    }

    #[tool(
        title = "Find files in the index",
        description = "Find files and folders in the index in milliseconds (no disk walk). `query` takes the full query language; `pattern` is a glob on the whole name; the other fields are the same filters spelled out. Paged: pass nextCursor back as `cursor`.",
        annotations(read_only_hint = true, open_world_hint = false),
        output_schema = schema_for_output::<FoundPage>()
    )]
    async fn find_files(&self, Parameters(p): Parameters<FindParams>) -> CallToolResult {
        finish(find::find_files(&self.ctx, p).await)
    }

    #[tool(
        title = "Search files by path glob",
        description = "Recursively find files and folders whose path relative to `path` matches a glob ('*.ext' in the folder itself, '**/*.ext' at any depth), answered from the index. Returns full paths. With `content`, only files whose text holds those words (PDF and Office included, in folders with content search on), each with the passage that matched.",
        annotations(read_only_hint = true, open_world_hint = false),
        output_schema = schema_for_output::<GlobPage>()
    )]
    async fn search_files(&self, Parameters(p): Parameters<GlobParams>) -> CallToolResult {
        finish(find::search_files(&self.ctx, p).await)
    }

    #[tool(
        title = "Get file info",
        description = "Metadata of one file or folder: size, times, permissions, type, plus kind, MIME type, text encoding and line count, and du figures for folders.",
        annotations(read_only_hint = true, open_world_hint = false),
        output_schema = schema_for_output::<FileInfo>()
    )]
    async fn get_file_info(&self, Parameters(p): Parameters<PathParams>) -> CallToolResult {
        finish(browse::get_file_info(&self.ctx, p).await)
    }

    #[tool(
        title = "List a directory",
        description = "A folder's children, marked [DIR] or [FILE], with size and modification time, from the index; sortBy name, size (largest first) or mtime (newest first). Paged for large folders.",
        annotations(read_only_hint = true, open_world_hint = false),
        output_schema = schema_for_output::<Listing>()
    )]
    async fn list_directory(&self, Parameters(p): Parameters<ListParams>) -> CallToolResult {
        finish(browse::list_directory(&self.ctx, p).await)
    }

    #[tool(
        title = "List a directory with sizes",
        description = "A folder's children with sizes: files their size, folders the size of everything in them (as du), with totals. sortBy name or size. Paged for large folders.",
        annotations(read_only_hint = true, open_world_hint = false),
        output_schema = schema_for_output::<SizedListing>()
    )]
    async fn list_directory_with_sizes(
        &self,
        Parameters(p): Parameters<SizesParams>,
    ) -> CallToolResult {
        finish(browse::list_directory_with_sizes(&self.ctx, p).await)
    }

    #[tool(
        title = "Directory tree",
        description = "A recursive tree of a folder (name, type, children), shallowest levels first, bounded by maxDepth and maxEntries; folders cut short say how many entries they hold beyond.",
        annotations(read_only_hint = true, open_world_hint = false),
        output_schema = schema_for_output::<TreeAnswer>()
    )]
    async fn directory_tree(&self, Parameters(p): Parameters<TreeParams>) -> CallToolResult {
        finish(browse::directory_tree(&self.ctx, p).await)
    }

    #[tool(
        title = "Disk usage",
        description = "Disk usage of a folder and its largest entries, equal to GNU du (allocated bytes as du -B1, apparent as du -b, hard links once), from the index's aggregates: instant at any size.",
        annotations(read_only_hint = true, open_world_hint = false),
        output_schema = schema_for_output::<DuAnswer>()
    )]
    async fn disk_usage(&self, Parameters(p): Parameters<DuParams>) -> CallToolResult {
        finish(browse::disk_usage(&self.ctx, p).await)
    }

    #[tool(
        title = "Find duplicate files",
        description = "Groups of byte-identical files (BLAKE3; hard links are one copy), largest reclaimable space first, with a breakdown by extension; narrow with path, query (the find_files language, matched by any copy) or kind, or ask summaryOnly for the totals alone. Paged.",
        annotations(read_only_hint = true, open_world_hint = false),
        output_schema = schema_for_output::<DupesAnswer>()
    )]
    async fn find_duplicates(&self, Parameters(p): Parameters<DupesParams>) -> CallToolResult {
        finish(find::find_duplicates(&self.ctx, p).await)
    }

    #[tool(
        title = "Map of a file tree",
        description = "A condensed outline of a tree that fits a token budget (bytes / 4, never exceeded): folders with size, file count and dominant kinds, alike names collapsed into patterns, recently active areas marked [recent]. Start here to understand a large tree.",
        annotations(read_only_hint = true, open_world_hint = false),
        output_schema = schema_for_output::<MapAnswer>()
    )]
    async fn fs_map(&self, Parameters(p): Parameters<MapParams>) -> CallToolResult {
        finish(browse::fs_map(&self.ctx, p).await)
    }

    #[tool(
        title = "Count files",
        description = "Counts and sizes of the files matching a query, per extension, kind, first-level folder, year or month: answers 'how many PDFs per year' in one call.",
        annotations(read_only_hint = true, open_world_hint = false),
        output_schema = schema_for_output::<CountAnswer>()
    )]
    async fn count_files(&self, Parameters(p): Parameters<CountParams>) -> CallToolResult {
        finish(find::count_files(&self.ctx, p).await)
    }

    #[tool(
        title = "Recently modified files",
        description = "Files modified lately, newest first (folders left out).",
        annotations(read_only_hint = true, open_world_hint = false),
        output_schema = schema_for_output::<RecentAnswer>()
    )]
    async fn recent_files(&self, Parameters(p): Parameters<RecentParams>) -> CallToolResult {
        finish(find::recent_files(&self.ctx, p).await)
    }

    #[tool(
        title = "Folder manifest",
        description = "One line per file of a project folder (relativePath, kind, size, mtime, summary), sorted by path, for an agent's context. The summary is the file's own: a document's title, its first heading, its first sentence, or a source file's module doc comment (at most 120 characters). Paged; with tokenBudget, the newest files that fit and how many older ones were left out.",
        annotations(read_only_hint = true, open_world_hint = false),
        output_schema = schema_for_output::<ManifestAnswer>()
    )]
    async fn folder_manifest(&self, Parameters(p): Parameters<ManifestParams>) -> CallToolResult {
        finish(find::folder_manifest(&self.ctx, p).await)
    }

    #[tool(
        title = "List saved searches",
        description = "The user's saved searches (shared with fsctl and fsgui): each name with the query it stands for. Run one by writing `@NAME` in find_files' query, alone or with more terms (`@taxes dm:2025`).",
        annotations(read_only_hint = true, open_world_hint = false),
        output_schema = schema_for_output::<SavedAnswer>()
    )]
    async fn list_saved_searches(
        &self,
        Parameters(p): Parameters<ListSavedParams>,
    ) -> CallToolResult {
        finish(searches::list_saved_searches(&self.ctx, p).await)
    }

    #[tool(
        title = "List projects",
        description = "Folders that hold a project (.git, Cargo.toml, package.json, pyproject.toml/setup.py, go.mod, pom.xml, build.gradle, *.sln/*.csproj, CMakeLists.txt, *.xcodeproj, a LaTeX root), each with its kinds, main languages by file count, size in bytes (as du), newest change, git branch, and the project it is nested in. From the index. Paged.",
        annotations(read_only_hint = true, open_world_hint = false),
        output_schema = schema_for_output::<ProjectsAnswer>()
    )]
    async fn list_projects(&self, Parameters(p): Parameters<ProjectsParams>) -> CallToolResult {
        finish(projects::list_projects(&self.ctx, p).await)
    }

    #[tool(
        title = "Read a text file or document",
        description = "Decoded text of a file (BOM, UTF-8, or the encoding chardetng detects), or the text of a document (PDF, DOCX, XLSX, PPTX, ODT, ODS, ODP, RTF, HTML, mail) as the index extracts it; whole or by head / tail / startLine-endLine, optionally numbered, cut at a line end where the answer would pass the byte budget (or maxBytes), saying where to go on. Other binary files are refused with their kind and size. A sensitive file (WARN tier, e.g. a password file) is refused unless allowSensitive is true: set it only when the user asked for that file.",
        annotations(read_only_hint = true, open_world_hint = false),
        output_schema = schema_for_output::<ReadAnswer>()
    )]
    async fn read_text_file(&self, Parameters(p): Parameters<ReadParams>) -> CallToolResult {
        finish(browse::read_text_file(&self.ctx, p).await)
    }

    #[tool(
        title = "Search file content",
        description = "Lines matching a regex (or literal text) in files' content: the index selects the candidate files (text and code, by kind and `include`) and they are read in parallel as streams (any size), stopping at maxResults or a 10 s time budget; the answer says where it stopped and names each file it could not read, with why. To find which documents (PDF, Office, mail included) mention words, in folders with content search on, find_files with query content:WORD or content:\"a phrase\" answers from the full-text index at once.",
        annotations(read_only_hint = true, open_world_hint = false),
        output_schema = schema_for_output::<ContentAnswer>()
    )]
    async fn search_file_content(
        &self,
        Parameters(p): Parameters<ContentParams>,
    ) -> CallToolResult {
        finish(find::search_file_content(&self.ctx, p).await)
    }

    #[tool(
        title = "Check a move plan",
        description = "Simulates a reorganisation without touching anything: missing sources, destinations that collide with each other or with existing files, moves into their own subtree, identical files among the moved ones, and, for each folder the plan touches (and only those), the names that arrive and leave.",
        annotations(read_only_hint = true, open_world_hint = false),
        output_schema = schema_for_output::<PlanAnswer>()
    )]
    async fn check_move_plan(&self, Parameters(p): Parameters<PlanParams>) -> CallToolResult {
        finish(plan::check_move_plan(&self.ctx, p).await)
    }

    #[tool(
        title = "Apply a move plan",
        description = "Carries out a reorganisation (served only when fsctl mcp runs with --allow-write): moves, renames, folders made, folders merged, as check_move_plan checks them. Each step is checked again right before it runs and skipped with the reason when its source changed or is gone or its destination exists; nothing is ever overwritten; missing folders are made; across file systems files are copied, checked by BLAKE3, then deleted. Every step is journalled; the answer's id undoes it all with undo_move_plan. Check the plan with check_move_plan and have the user approve it first.",
        annotations(
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = true,
            open_world_hint = false
        ),
        output_schema = schema_for_output::<ApplyAnswer>()
    )]
    async fn apply_move_plan(&self, Parameters(p): Parameters<ApplyParams>) -> CallToolResult {
        finish(organise::apply_move_plan(&self.ctx, p).await)
    }

    #[tool(
        title = "Undo a move plan",
        description = "Puts back what apply_move_plan moved (served only with --allow-write): every entry returns to its old path with its content and mtime, newest step first; an entry changed since, or whose old place is taken, is refused with the reason and the rest go on. Undoing a plan undone already is refused.",
        annotations(
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = true,
            open_world_hint = false
        ),
        output_schema = schema_for_output::<ApplyAnswer>()
    )]
    async fn undo_move_plan(&self, Parameters(p): Parameters<UndoParams>) -> CallToolResult {
        finish(organise::undo_move_plan(&self.ctx, p).await)
    }

    #[tool(
        title = "List tags",
        description = "The user's tags: those of one file or folder (with `path`), or every tag on entries under the allowed directories with how many carry it. Tags the user set (source `user`) and tags other programs wrote in the file's user.xdg.tags (source `xattr`, e.g. KDE Dolphin). Find the tagged files with find_files and the query `tag:NAME`.",
        annotations(read_only_hint = true, open_world_hint = false),
        output_schema = schema_for_output::<TagsAnswer>()
    )]
    async fn list_tags(&self, Parameters(p): Parameters<ListTagsParams>) -> CallToolResult {
        finish(labels::list_tags(&self.ctx, p).await)
    }

    #[tool(
        title = "Tag a file",
        description = "Adds the user's tags to a file or folder, kept in the index (not in the file, which is not changed): they follow it through moves and renames and go when it is deleted; `tag:NAME` finds it in find_files. Tags compare case-insensitively and hold no commas. Answers the entry's tags afterwards.",
        annotations(
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        ),
        output_schema = schema_for_output::<TagsAnswer>()
    )]
    async fn add_tags(&self, Parameters(p): Parameters<TagParams>) -> CallToolResult {
        finish(labels::add_tags(&self.ctx, p).await)
    }

    #[tool(
        title = "Untag a file",
        description = "Takes the user's tags off a file or folder (tags read from its user.xdg.tags stay: they are the file's). Answers the entry's tags afterwards.",
        annotations(
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = true,
            open_world_hint = false
        ),
        output_schema = schema_for_output::<TagsAnswer>()
    )]
    async fn remove_tags(&self, Parameters(p): Parameters<TagParams>) -> CallToolResult {
        finish(labels::remove_tags(&self.ctx, p).await)
    }

    #[tool(
        title = "List bookmarks",
        description = "The user's bookmarks under the allowed directories: each name with where its folder or file is now (bookmarks follow moves).",
        annotations(read_only_hint = true, open_world_hint = false),
        output_schema = schema_for_output::<BookmarksAnswer>()
    )]
    async fn list_bookmarks(
        &self,
        Parameters(p): Parameters<ListBookmarksParams>,
    ) -> CallToolResult {
        finish(labels::list_bookmarks(&self.ctx, p).await)
    }

    #[tool(
        title = "Bookmark a folder",
        description = "Bookmarks a folder or file under a name (default: its own name), kept in the index (nothing on disk changes); refused when the name is taken or the entry has a bookmark already. Answers the bookmarks afterwards.",
        annotations(
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = false,
            open_world_hint = false
        ),
        output_schema = schema_for_output::<BookmarksAnswer>()
    )]
    async fn add_bookmark(&self, Parameters(p): Parameters<BookmarkParams>) -> CallToolResult {
        finish(labels::add_bookmark(&self.ctx, p).await)
    }

    #[tool(
        title = "Remove a bookmark",
        description = "Removes the user's bookmark with this name, or else the bookmark on this path (the folder or file itself is not touched). Answers the bookmarks afterwards.",
        annotations(
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = false,
            open_world_hint = false
        ),
        output_schema = schema_for_output::<BookmarksAnswer>()
    )]
    async fn remove_bookmark(
        &self,
        Parameters(p): Parameters<RemoveBookmarkParams>,
    ) -> CallToolResult {
        finish(labels::remove_bookmark(&self.ctx, p).await)
    }
}

/// A tools/call's arguments that the tool's schema refuses: before
/// 2025-11-25 a protocol error (-32602), as that revision said; from it
/// on a tool error the model reads (SEP-1303).
fn bad_arguments(
    version: Option<ProtocolVersion>,
    line: String,
) -> Result<CallToolResponse, ErrorData> {
    if version.is_some_and(|v| v >= ProtocolVersion::V_2025_11_25) {
        Ok(CallToolResult::error(vec![ContentBlock::text(line)]).into())
    } else {
        Err(ErrorData::invalid_params(line, None))
    }
}

#[tool_handler(
    router = self.tools,
    name = "fsindex",
    instructions = "Tools over fsindex, a live index of the user's files; they only read, except apply_move_plan and undo_move_plan, served only when the user started the server with --allow-write, and the tag and bookmark tools, which change only the index's labels, never a file. Paths must be under the allowed directories (list_allowed_directories). Prefer fs_map to get the lie of a tree, find_files / count_files / disk_usage / find_duplicates over walking, and read_text_file to read. Every answer fits a byte budget (32 KiB unless configured): long lists are paged, the text says how many there are and the cursor of the rest (pass nextCursor back as cursor). Paths come shown: a name that is not UTF-8 has \\xHH for its odd bytes, control characters are escaped (\\n, \\t, \\u{202E}) and a backslash is doubled; pass a path back exactly as shown and it reaches the same file."
)]
impl ServerHandler for FsIndexServer {
    async fn call_tool(
        &self,
        mut request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let version = context.protocol_version();
        let Some(tool) = self.tools.get(&request.name) else {
            let names: Vec<String> = self
                .tools
                .list_all()
                .into_iter()
                .map(|t| t.name.into_owned())
                .collect();
            return Err(ErrorData::invalid_params(
                format!(
                    "unknown tool `{}`; the tools are: {}",
                    request.name.escape_debug(),
                    names.join(", ")
                ),
                None,
            ));
        };
        let mut args = request.arguments.take().unwrap_or_default();
        if let Err(bad) = schema::check_arguments(&request.name, &tool.input_schema, &mut args) {
            return bad_arguments(version, bad.0);
        }
        request.arguments = Some(args);
        // The client's roots, if it offered them, before the first answer.
        if context
            .peer
            .peer_info()
            .is_some_and(|i| i.capabilities.roots.is_some())
        {
            self.roots.settled(Duration::from_secs(5)).await;
        }
        let ctx = self.ctx.clone();
        let call = async {
            let tcc = ToolCallContext::new(self, request, context);
            self.tools.call(tcc).await
        };
        let (r, mut notices) = with_notices(call).await;
        let mut r = r?;
        if let Some(n) = ctx.scan_notice().await {
            notices.push(n);
        }
        if let CallToolResponse::Complete(result) = &mut r {
            add_notices(result, notices);
        }
        Ok(r)
    }

    /// A request rmcp could not read as one it knows: a tools/call without
    /// a `name` (or with arguments that are not an object) is a malformed
    /// tools/call (-32602), not an unknown method.
    async fn on_custom_request(
        &self,
        request: CustomRequest,
        _context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        if request.method == "tools/call" {
            let p = request.params.unwrap_or_default();
            let why = match (p.get("name"), p.get("arguments")) {
                (None, _) => "params.name is missing: give the tool's name (see tools/list)",
                (Some(n), _) if !n.is_string() => "params.name must be a string: the tool's name",
                (_, Some(a)) if !a.is_object() && !a.is_null() => {
                    "params.arguments must be an object of the tool's parameters"
                }
                _ => "params are not a valid CallToolRequest",
            };
            return Err(ErrorData::invalid_params(
                format!("tools/call: {why}"),
                None,
            ));
        }
        Err(ErrorData::new(
            rmcp::model::ErrorCode::METHOD_NOT_FOUND,
            format!("unknown method `{}`", request.method.escape_debug()),
            None,
        ))
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        self.roots.start(context.peer, self.ctx.clone()).await;
    }

    async fn on_roots_list_changed(&self, context: NotificationContext<RoleServer>) {
        self.roots.refresh(context.peer, self.ctx.clone()).await;
    }
}
