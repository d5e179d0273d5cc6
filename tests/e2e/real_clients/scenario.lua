-- Headless Neovim (0.7+) scenario against the real Steadyhand server.
-- Inputs (environment): SH_WORKSPACE (also the current directory), SH_RESULT (JSON
-- written here), SH_CONFIG: "plain" (Neovim's own capabilities, so the server writes disk
-- itself and edits arrive as unversioned `changes`) or "recommended" (SH_USER_CONFIG, the
-- configuration from docs/editors.md, is loaded as a user's init.lua would).
-- `steadyhand` must be on PATH.
local ws = os.getenv('SH_WORKSPACE')
local result_path = os.getenv('SH_RESULT')
local config = os.getenv('SH_CONFIG') or 'plain'
local user_config = os.getenv('SH_USER_CONFIG')

local R = { steps = {} }

local function read_file(path)
  local fh = io.open(path, 'rb')
  if not fh then return vim.NIL end
  local data = fh:read('*a')
  fh:close()
  return data
end

local function buf_text(bufnr)
  local lines = vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)
  local text = table.concat(lines, '\n')
  if vim.api.nvim_buf_get_option(bufnr, 'eol') then text = text .. '\n' end
  return text
end

local function break_undo()
  -- Setting 'undolevels' to its own value starts a new undo block (:help undo-blocks).
  vim.o.undolevels = vim.o.undolevels
end

local client_id
local function run(bufnr, command, args)
  if _G.steadyhand then -- the helper from docs/editors.md; it returns at once, this script waits
    local out
    local ok, err = pcall(_G.steadyhand.call, command, args, function(r, why)
      out = r or { call_error = tostring(why) }
    end)
    if not ok then return { call_error = tostring(err) } end
    R.helper_answered_later = R.helper_answered_later ~= false and out == nil
    vim.wait(15000, function() return out ~= nil end, 10)
    return out or { call_error = 'no answer' }
  end
  local resp, err = vim.lsp.buf_request_sync(
    bufnr, 'workspace/executeCommand', { command = command, arguments = { args } }, 15000)
  if not resp then return { transport_error = tostring(err) } end
  local r = resp[client_id]
  if not r then return { transport_error = 'no response' } end
  if r.err or r.error then return { rpc_error = vim.inspect(r.err or r.error) } end
  return r.result
end

local function main()
  local saves = {}
  vim.api.nvim_create_autocmd('BufWritePost', {
    callback = function(args) table.insert(saves, args.file) end,
  })
  local notes = ws .. '/notes.txt'
  local bufnr
  if config == 'recommended' then
    dofile(user_config)
    vim.cmd('edit ' .. vim.fn.fnameescape(notes)) -- the config's autocmd starts and attaches
    bufnr = vim.api.nvim_get_current_buf()
    client_id = _G.steadyhand.client_id
  else
    client_id = vim.lsp.start_client({
      name = 'steadyhand',
      cmd = { 'steadyhand', 'serve' },
      root_dir = ws,
      capabilities = vim.lsp.protocol.make_client_capabilities(),
    })
    vim.cmd('edit ' .. vim.fn.fnameescape(notes))
    bufnr = vim.api.nvim_get_current_buf()
    vim.lsp.buf_attach_client(bufnr, client_id)
  end
  R.client_started = client_id ~= nil
  if not client_id then return end
  local client = vim.lsp.get_client_by_id(client_id)
  vim.wait(20000, function() return client.initialized end, 20)
  R.initialized = client.initialized == true
  if not R.initialized then return end
  R.offset_encoding = client.offset_encoding

  -- 1. Read the open file through the server.
  R.steps.read = run(bufnr, 'steadyhand.read', { file_path = 'notes.txt' })

  -- 2. Edit it: one versioned WorkspaceEdit, one undo step, disk follows.
  local original = buf_text(bufnr)
  break_undo()
  R.steps.edit = run(bufnr, 'steadyhand.edit', {
    file_path = 'notes.txt', old_string = 'color', new_string = 'colour', replace_all = true })
  vim.wait(300) -- let the didChange go out
  R.after_edit = {
    buffer = buf_text(bufnr),
    disk = read_file(notes),
    modified = vim.api.nvim_buf_get_option(bufnr, 'modified'),
    saves = #saves,
  }
  break_undo()
  vim.cmd('silent undo')
  R.after_undo = { buffer = buf_text(bufnr), restored = buf_text(bufnr) == original }
  vim.cmd('silent redo')
  R.after_redo = { buffer = buf_text(bufnr) }
  vim.wait(300)

  -- 3. Positions on a line with emoji, CJK and a combining accent (UTF-16 offsets).
  R.steps.unicode = run(bufnr, 'steadyhand.edit', {
    file_path = 'notes.txt', old_string = 'caf\u{301} end', new_string = 'caf\u{301} END' })
  vim.wait(300)
  R.after_unicode = { buffer = buf_text(bufnr), disk = read_file(notes) }

  -- 4. The user types, then the agent edits: refused as stale, buffer intact.
  break_undo()
  local keys = vim.api.nvim_replace_termcodes('Gotyped by the user<Esc>', true, false, true)
  vim.api.nvim_feedkeys(keys, 'xt', false)
  local typed = buf_text(bufnr)
  local disk_before = read_file(notes)
  R.steps.stale = run(bufnr, 'steadyhand.edit', {
    file_path = 'notes.txt', old_string = 'first', new_string = 'FIRST' })
  vim.wait(300)
  R.after_stale = {
    typed = typed,
    buffer = buf_text(bufnr),
    disk_before = disk_before,
    disk = read_file(notes),
  }

  -- The user takes the typing back: the buffer holds the disk's text again.
  vim.cmd('silent undo')
  R.after_take_back = { buffer = buf_text(bufnr), disk = read_file(notes) }
  vim.wait(300)

  -- 5. The user types at the very moment the agent's edit reaches the editor.
  R.steps.race_read = run(bufnr, 'steadyhand.read', { file_path = 'notes.txt' })
  local real_apply = vim.lsp.handlers['workspace/applyEdit']
  local raced = false
  vim.lsp.handlers['workspace/applyEdit'] = function(err, params, ctx, config)
    if not raced then
      raced = true
      vim.api.nvim_buf_set_lines(bufnr, 0, 0, false, { 'typed during the edit' })
    end
    return real_apply(err, params, ctx, config)
  end
  local disk_race = read_file(notes)
  R.steps.race = run(bufnr, 'steadyhand.edit', {
    file_path = 'notes.txt', old_string = 'second', new_string = 'SECOND' })
  vim.lsp.handlers['workspace/applyEdit'] = real_apply
  vim.wait(300)
  R.after_race = { buffer = buf_text(bufnr), disk_before = disk_race, disk = read_file(notes) }

  -- 6. A file that is not open goes straight to disk; so does a new file.
  local closed = ws .. '/closed.txt'
  R.steps.closed_read = run(bufnr, 'steadyhand.read', { file_path = 'closed.txt' })
  R.steps.closed_edit = run(bufnr, 'steadyhand.edit', {
    file_path = 'closed.txt', old_string = 'on disk', new_string = 'ON DISK' })
  R.steps.create = run(bufnr, 'steadyhand.write', {
    file_path = 'sub/new.txt', content = 'brand new\n' })
  R.after_closed = {
    disk = read_file(closed),
    loaded = vim.fn.bufloaded(closed) == 1,
    created = read_file(ws .. '/sub/new.txt'),
    created_loaded = vim.fn.bufloaded(ws .. '/sub/new.txt') == 1,
  }
  R.saves = vim.deepcopy(saves)

  -- 7. The configuration's save handler: a buffer typed in since the version the server
  --    names is not saved (that would save the typing); at that version it is.
  if config == 'recommended' then
    local save = _G.steadyhand.handlers['steadyhand/saveDocuments']
    local uri = vim.uri_from_bufnr(bufnr)
    local disk_before = read_file(notes)
    local before = vim.lsp.util.buf_versions[bufnr]
    vim.api.nvim_buf_set_lines(bufnr, -1, -1, false, { 'typed after the edit' })
    local typed = buf_text(bufnr)
    local refused = save(nil, { uris = { uri }, versions = { [uri] = before } })
    R.save_handler = {
      refused = refused,
      disk_before = disk_before,
      disk_after_refusal = read_file(notes),
      modified = vim.api.nvim_buf_get_option(bufnr, 'modified'),
      saves = #saves - #R.saves,
    }
    local now = vim.lsp.util.buf_versions[bufnr]
    R.save_handler.accepted = save(nil, { uris = { uri }, versions = { [uri] = now } })
    R.save_handler.typed = typed
    R.save_handler.disk_after_save = read_file(notes)
  end
end

local ok, err = xpcall(main, debug.traceback)
if not ok then R.fatal = err end
if client_id then
  vim.lsp.stop_client(client_id)
  vim.wait(2000, function() return vim.lsp.get_client_by_id(client_id) == nil end, 20)
end
local fh = assert(io.open(result_path, 'w'))
fh:write(vim.fn.json_encode(R))
fh:close()
vim.cmd('qa!')
