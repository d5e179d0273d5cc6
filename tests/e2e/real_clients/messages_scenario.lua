-- Headless Neovim (0.7+): the plugin's wording for people, case by case. SH_CASES (a JSON file)
-- lists cases: { fn = 'for_person', message = ... } or { fn = 'describe', command = ...,
-- params = ..., result = ... }; each case's { text, level } goes to SH_RESULT, in order.
local out = { answers = {} }
local ok, err = pcall(function()
  vim.opt.rtp:append(os.getenv('SH_PLUGIN'))
  local sh = require('steadyhand')
  local fh = assert(io.open(os.getenv('SH_CASES'), 'r'))
  local cases = vim.fn.json_decode(fh:read('*a'))
  fh:close()
  for _, case in ipairs(cases) do
    local text, level
    if case.fn == 'for_person' then
      text = sh.for_person(case.message)
    else
      text, level = sh.describe(case.command, case.params, case.result)
    end
    table.insert(out.answers, { text = text or vim.NIL, level = level or vim.NIL })
  end
end)
if not ok then out.fatal = tostring(err) end
local fh = assert(io.open(os.getenv('SH_RESULT'), 'w'))
fh:write(vim.fn.json_encode(out))
fh:close()
vim.cmd('qa!')
