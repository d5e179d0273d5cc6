-- Headless Neovim (0.7+) with the Steadyhand plugin (editors/nvim) against the real server.
-- Inputs (environment): SH_WORKSPACE (also the current directory), SH_RESULT (JSON written
-- here), SH_PLUGIN (the plugin folder), SH_CONFIG: "pack" (installed on the native package
-- path) or "rtp" (added to 'runtimepath', as lazy.nvim and packer do with a subfolder).
-- `steadyhand` must be on PATH.
local ws = os.getenv('SH_WORKSPACE')
local result_path = os.getenv('SH_RESULT')
local plugin = os.getenv('SH_PLUGIN')
local how = os.getenv('SH_CONFIG') or 'pack'

local R = { steps = {}, messages = {} }

local function read_file(path)
  local fh = io.open(path, 'rb')
  if not fh then return vim.NIL end
  local data = fh:read('*a')
  fh:close()
  return data
end

local function write_file(path, text)
  local fh = assert(io.open(path, 'wb'))
  fh:write(text)
  fh:close()
end

local function buf_text(bufnr)
  local lines = vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)
  local text = table.concat(lines, '\n')
  if vim.bo[bufnr].eol then text = text .. '\n' end
  return text
end

-- Messages the plugin shows, kept for the test.
vim.notify = function(msg, level)
  table.insert(R.messages, { msg = msg, level = level })
end

local function last_message()
  local m = R.messages[#R.messages]
  return m and m.msg or vim.NIL
end

local function main()
  R.version = vim.version and tostring(vim.version().major .. '.' .. vim.version().minor) or '?'
  if how == 'pack' then
    -- pack/steadyhand/start/steadyhand -> the plugin folder, as a user would link or copy it
    local pack = ws .. '/../packs'
    vim.fn.mkdir(pack .. '/pack/steadyhand/start', 'p')
    assert(vim.loop.fs_symlink(plugin, pack .. '/pack/steadyhand/start/steadyhand'))
    vim.o.packpath = pack
    vim.cmd('packloadall')
  else
    vim.opt.rtp:append(plugin)
  end
  local sh = require('steadyhand')
  R.loaded = true
  vim.fn.mkdir(ws .. '/.git', 'p') -- the project root
  local lines = {}
  for i = 1, 10 do lines[i] = string.format('line_%d = %d', i, i) end
  local original = table.concat(lines, '\n') .. '\n'
  local app = ws .. '/app.py'
  write_file(app, original)
  R.original = original

  sh.setup({ session = 'default' })
  vim.cmd('edit ' .. vim.fn.fnameescape(app))
  local bufnr = vim.api.nvim_get_current_buf()
  local client = sh.client()
  R.client_started = client ~= nil
  if not client then return end
  vim.wait(20000, function() return client.initialized end, 20)
  R.initialized = client.initialized == true
  if not R.initialized then return end
  R.root = client.config.root_dir

  -- Agent changes, made through the server as an agent would. The plugin never waits for
  -- an answer; this script does.
  local function call(command, params)
    local out
    sh.call(command, params, function(r, err)
      out = r or { call_error = err }
    end)
    vim.wait(30000, function() return out ~= nil end, 10)
    return out or { call_error = 'no answer' }
  end
  -- An Ex command as a user types it, then the wait for its answer to be shown.
  local function ex(cmdline)
    vim.cmd(cmdline)
    vim.wait(30000, function() return sh.in_flight == 0 end, 10)
  end
  call('steadyhand.read', { file_path = app })
  R.steps.edit2 = call('steadyhand.edit', { file_path = app, old_string = 'line_2 = 2', new_string = 'second = 2' })
  R.steps.edit8 = call('steadyhand.edit', { file_path = app, old_string = 'line_8 = 8', new_string = 'eighth = 8' })
  ex('SteadyhandCheckpoint before five')
  R.steps.checkpoint = sh.last
  R.checkpoint_message = last_message()
  R.steps.edit5 = call('steadyhand.edit', { file_path = app, old_string = 'line_5 = 5', new_string = 'fifth = 5' })
  R.after_edits = { buffer = buf_text(bufnr), disk = read_file(app), modified = vim.bo[bufnr].modified }

  -- :SteadyhandChanges fills the quickfix list.
  ex('SteadyhandChanges')
  local qf = vim.fn.getqflist({ title = 1, items = 1 })
  R.quickfix = { title = qf.title, items = {} }
  for _, it in ipairs(qf.items) do
    local file = it.bufnr > 0 and vim.api.nvim_buf_get_name(it.bufnr) or vim.NIL
    table.insert(R.quickfix.items, { file = file, valid = it.valid == 1, text = it.text })
  end
  R.quickfix_open = vim.bo.buftype == 'quickfix'
  vim.cmd('cclose')
  local changes = sh.last.changes
  local id5, id8, id2 = changes[1].id, changes[2].id, changes[3].id
  R.ids = { id2, id8, id5 }

  -- :SteadyhandDiff opens a tab diffing the change's two texts.
  local tabs_before = #vim.api.nvim_list_tabpages()
  ex('SteadyhandDiff ' .. id2)
  local wins = vim.api.nvim_tabpage_list_wins(0)
  R.diff = { tabs_added = #vim.api.nvim_list_tabpages() - tabs_before, windows = {} }
  for _, win in ipairs(wins) do
    local b = vim.api.nvim_win_get_buf(win)
    table.insert(R.diff.windows, {
      name = vim.api.nvim_buf_get_name(b),
      text = buf_text(b),
      diff = vim.wo[win].diff,
      modifiable = vim.bo[b].modifiable,
      buftype = vim.bo[b].buftype,
      filetype = vim.bo[b].filetype,
    })
  end
  vim.cmd('tabclose')
  vim.api.nvim_set_current_buf(bufnr)

  -- :SteadyhandTakeBack takes the earlier change out of the buffer, keeping the later ones.
  ex('SteadyhandTakeBack ' .. id2)
  R.steps.take_back = sh.last
  R.after_take_back = { buffer = buf_text(bufnr), disk = read_file(app), message = last_message() }

  -- Two changes on one line: the earlier cannot be taken back alone.
  call('steadyhand.edit', { file_path = app, old_string = 'line_3 = 3', new_string = 'three = 3' })
  call('steadyhand.edit', { file_path = app, old_string = 'three = 3', new_string = 'THREE = 3' })
  local two = call('steadyhand.changes', { path = app, limit = 2 }).changes
  local before_conflict = buf_text(bufnr)
  ex('SteadyhandTakeBack ' .. two[2].id)
  R.steps.conflict = sh.last
  R.after_conflict = { unchanged = buf_text(bufnr) == before_conflict, message = last_message() }

  -- :SteadyhandRewind puts back every file the session changed since the checkpoint.
  ex('SteadyhandRewind before five')
  R.steps.rewind = sh.last
  R.after_rewind = { buffer = buf_text(bufnr), disk = read_file(app), message = last_message() }

  -- Taking back the latest change after the user typed: refused, then taken back anyway.
  call('steadyhand.read', { file_path = app })
  call('steadyhand.edit', { file_path = app, old_string = 'line_9 = 9', new_string = 'ninth = 9' })
  local latest = call('steadyhand.changes', { path = app, limit = 1 }).changes[1].id
  vim.api.nvim_buf_set_lines(bufnr, 0, 0, false, { '# typed by the user' })
  ex('SteadyhandTakeBack ' .. latest)
  R.steps.stale = sh.last
  R.after_stale = { buffer = buf_text(bufnr), message = last_message() }
  ex('SteadyhandTakeBack! ' .. latest)
  R.steps.forced = sh.last
  R.after_forced = { buffer = buf_text(bufnr), message = last_message() }

  -- Refusals in Neovim's words: an id no change has, a checkpoint the session does not have.
  ex('SteadyhandTakeBack nosuchid')
  R.unknown_id = { result = sh.last, message = last_message() }
  ex('SteadyhandDiff nosuchid')
  R.unknown_diff = { result = sh.last, message = last_message() }
  ex('SteadyhandRewind no such checkpoint')
  R.unknown_checkpoint = { result = sh.last, message = last_message() }
end

local ok, err = pcall(main)
if not ok then R.fatal = tostring(err) end
local fh = io.open(result_path, 'w')
fh:write(vim.fn.json_encode(R))
fh:close()
vim.cmd('qa!')
