-- Headless Neovim (0.7+) holding a file open with unsaved typing while an agent works on
-- it over MCP (`steadyhand mcp`, attached to this Neovim's `steadyhand serve`).
-- Inputs (environment): SH_WORKSPACE (also the current directory), SH_RESULT (JSON written
-- here at the end), SH_READY (written once the typing is in the buffer), SH_GO (the test
-- creates it when the agent is done). `steadyhand` must be on PATH.
local ws = os.getenv('SH_WORKSPACE')
local result_path = os.getenv('SH_RESULT')
local ready_path = os.getenv('SH_READY')
local go_path = os.getenv('SH_GO')

local R = {}

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

local function exists(path)
  return vim.loop.fs_stat(path) ~= nil
end

local client_id
local function main()
  local notes = ws .. '/notes.txt'
  client_id = vim.lsp.start_client({
    name = 'steadyhand',
    cmd = { 'steadyhand', 'serve' },
    root_dir = ws,
    capabilities = vim.lsp.protocol.make_client_capabilities(),
  })
  vim.cmd('edit ' .. vim.fn.fnameescape(notes))
  local bufnr = vim.api.nvim_get_current_buf()
  vim.lsp.buf_attach_client(bufnr, client_id)
  local client = vim.lsp.get_client_by_id(client_id)
  vim.wait(20000, function() return client.initialized end, 20)
  R.initialized = client.initialized == true
  if not R.initialized then return end

  -- The user types a line and does not save.
  local keys = vim.api.nvim_replace_termcodes('Gotyped by the user<Esc>', true, false, true)
  vim.api.nvim_feedkeys(keys, 'xt', false)
  vim.wait(300) -- let the didChange go out
  R.typed = buf_text(bufnr)
  local fh = assert(io.open(ready_path, 'w'))
  fh:write('ready')
  fh:close()

  -- Serve the server's requests (the agent's edit arrives as workspace/applyEdit) until
  -- the test says the agent is done.
  R.go = vim.wait(90000, function() return exists(go_path) end, 20)
  vim.wait(300)
  R.buffer = buf_text(bufnr)
  R.disk = read_file(notes)
  R.modified = vim.api.nvim_buf_get_option(bufnr, 'modified')
end

local ok, err = xpcall(main, debug.traceback)
if not ok then R.fatal = err end
if client_id then
  vim.lsp.stop_client(client_id)
  vim.wait(2000, function() return vim.lsp.get_client_by_id(client_id) == nil end, 20)
end
local out = assert(io.open(result_path, 'w'))
out:write(vim.fn.json_encode(R))
out:close()
vim.cmd('qa!')
